"""Instruction counts: viewlint against `ast.parse`, and against an older commit, without timing noise.

Usage:
    python bench/instructions.py CORPUS_DIR [--every 60] [--offset 0] [--old COMMIT]

Wall-clock and CPU time on a shared two-core machine move by 10-30% between runs, more than most
single changes to the analysis are worth. Valgrind's `callgrind` counts the instructions a process
executes instead, which do not depend on the machine's load (about 50 times slower, so this reads
every `--every`-th file of the corpus). Each measured process reads the same files; a process that
only reads them (and imports viewlint) is measured too and taken off, so the figures are:

- `ast.parse`: a single-process `ast.parse` of every file (the speed benchmark's baseline);
- `viewlint`: the in-process lint of every file (the engine's `lint_text`, default settings, the
  collector as a run sets it), and its ratio to `ast.parse`;
- with `--old COMMIT`: the same lint by that commit (checked out into a temporary git worktree),
  and new/old. Both report their findings, which must be the same for a change made for speed.

Instructions are not time: memory traffic and the collector's scans cost time that a count does
not show (the collector is off while linting, as in a run, with one collection after each file).
Bytecode is compiled before counting (some sandboxes set PYTHONDONTWRITEBYTECODE, which would
count the compilation of viewlint's own modules); the hash seed is fixed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent

# The measured programs: `python -c SCRIPT CORPUS EVERY OFFSET MODE`.
SCRIPT = r"""
import gc, sys
from pathlib import Path
corpus, every, offset, mode = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
files = sorted(p for p in corpus.rglob("*.py") if p.is_file())[offset::every]
texts = [p.read_bytes().decode("utf-8", "replace") for p in files]
if mode == "ast":
    import ast
    for text in texts:
        try:
            ast.parse(text)
        except (SyntaxError, ValueError):
            pass
elif mode in ("read", "lint"):
    from viewlint.engine import lint_text
    from viewlint.registry import all_rules
    from viewlint.settings import Settings
    settings = Settings()
    all_rules()
    if mode == "lint":
        gc.collect(); gc.freeze(); gc.disable()
        findings = 0
        for path, text in zip(files, texts):
            findings += len(lint_text(text, str(path), settings, str(path)))
            gc.collect(0)
        print("findings", findings)
"""


def count(mode: str, corpus: Path, every: int, offset: int, pythonpath: str | None = None) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONHASHSEED"] = "0"
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    with tempfile.NamedTemporaryFile(suffix=".callgrind") as out:
        result = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}", sys.executable, "-c", SCRIPT,
             str(corpus), str(every), str(offset), mode],
            capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())  # not this checkout: `-c` puts the cwd first
    found = re.search(r"Collected : (\d+)", result.stderr)
    if result.returncode != 0 or found is None:
        sys.exit(f"{mode} failed ({result.returncode}): {result.stderr[-2000:]}")
    return int(found.group(1)), result.stdout.strip()


def compile_all(root: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "viewlint"), str(root / "rules")],
                   capture_output=True, env=env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--every", type=int, default=60)
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--old", default=None, help="a commit to compare with")
    options = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (Debian: apt-get install valgrind)")
    corpus = options.corpus.resolve()
    files = sorted(p for p in corpus.rglob("*.py") if p.is_file())[options.offset::options.every]
    print(f"{len(files)} files (every {options.every}th of {corpus}, from {options.offset})")
    compile_all(REPOSITORY)

    def net(mode: str, pythonpath: str | None = None) -> tuple[int, str]:
        total, output = count(mode, corpus, options.every, options.offset, pythonpath)
        base, _ = count("read" if mode == "lint" else "none", corpus, options.every, options.offset, pythonpath)
        return total - base, output

    parsed, _ = net("ast")
    print(f"ast.parse: {parsed / 1e9:.3f} G instructions")
    linted, findings = net("lint")
    print(f"viewlint:  {linted / 1e9:.3f} G instructions ({linted / parsed:.2f}x ast.parse), {findings}")
    if options.old is None:
        return
    worktree = Path(tempfile.mkdtemp(prefix="viewlint-old-")) / "tree"
    subprocess.run(["git", "-C", str(REPOSITORY), "worktree", "add", "--detach", str(worktree), options.old],
                   check=True, capture_output=True)
    try:
        # The editable install maps `viewlint.rules` to this checkout's rules: give the old code its own.
        link = worktree / "viewlint" / "rules"
        if not link.exists():
            link.symlink_to("../rules")
        compile_all(worktree)
        old, old_findings = net("lint", str(worktree))
        print(f"old ({options.old}): {old / 1e9:.3f} G instructions ({old / parsed:.2f}x ast.parse), {old_findings}")
        print(f"new/old: {linted / old:.3f}; same findings count: {findings == old_findings}")
    finally:
        subprocess.run(["git", "-C", str(REPOSITORY), "worktree", "remove", "--force", str(worktree)], capture_output=True)


if __name__ == "__main__":
    main()
