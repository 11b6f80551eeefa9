"""A/B speed: the working tree's viewlint against an older commit, interleaved on one corpus.

Usage:
    python bench/ab.py OLD_COMMIT CORPUS_DIR [--every 3] [--rounds 3] [--jobs 1]

Checks OLD_COMMIT out into a temporary git worktree and runs `viewlint check --no-cache` of
both versions on every `--every`-th Python file of the corpus, alternating old and new in each
round, with a single-process `ast.parse` of the same files as the baseline of each round
(these machines are noisy: one slow minute hits one side only if the sides are not
interleaved). Prints each run's wall-clock and CPU time (user + system of all its processes:
steadier than wall clock on a shared machine), the wall clock's ratio to the round's
`ast.parse`, the new/old ratios per round and their means, and whether both versions report
the same findings.

Run it from a checkout whose viewlint is installed in the current environment (an editable
install): the old version is put first on PYTHONPATH, with its rules where the package
imports them from.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from speed import time_ast  # noqa: E402 - the corpus benchmark's `ast.parse` baseline


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def lint(files: list[Path], pythonpath: "str | None", jobs: int, listing: Path) -> tuple[float, float, list[str]]:
    """Wall-clock seconds, CPU seconds (user + system, all processes) and the findings of one run."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    command = [sys.executable, "-m", "viewlint", "check", "--no-cache", f"-j{jobs}", "--output-format", "concise",
               *(str(f.resolve()) for f in files)]
    start, cpu = time.perf_counter(), _children_cpu()
    # From the listing's folder, not the caller's: `python -m viewlint` in a checkout imports that checkout's package
    # first, whatever PYTHONPATH says, and both sides would run the same code.
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False, cwd=listing.parent)
    elapsed, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if done.returncode not in (0, 1):
        sys.exit(f"viewlint exited {done.returncode}: {done.stderr[-2000:]}")
    findings = sorted(line for line in done.stdout.splitlines() if line.count(":") >= 3 and ": VL" in line)
    listing.write_text("\n".join(findings) + "\n")
    return elapsed, cpu, findings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old")
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--every", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    files = sorted(p for p in args.corpus.rglob("*.py") if p.is_file())[::args.every]
    with tempfile.TemporaryDirectory(prefix="viewlint-ab-") as work:
        old = Path(work) / "old"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(old), args.old], check=True)
        try:
            (old / "viewlint" / "rules").symlink_to(old / "rules", target_is_directory=True)
            ratios: list[float] = []
            cpu_ratios: list[float] = []
            same = True
            print(f"{len(files)} files (every {args.every}th of {args.corpus}), -j{args.jobs}, old = {args.old}")
            for round_number in range(1, args.rounds + 1):
                old_time, old_cpu, old_findings = lint(files, str(old), args.jobs, Path(work) / "old.txt")
                new_time, new_cpu, new_findings = lint(files, None, args.jobs, Path(work) / "new.txt")
                baseline = time_ast(files)
                same = same and old_findings == new_findings
                ratios.append(new_time / old_time)
                cpu_ratios.append(new_cpu / old_cpu)
                print(f"round {round_number}: ast.parse {baseline:.2f} s; old {old_time:.2f} s ({old_time / baseline:.2f}x, "
                      f"CPU {old_cpu:.2f} s); new {new_time:.2f} s ({new_time / baseline:.2f}x, CPU {new_cpu:.2f} s); "
                      f"new/old {new_time / old_time:.3f} (CPU {new_cpu / old_cpu:.3f}); "
                      f"findings {len(old_findings)} / {len(new_findings)}")
            print(f"new/old wall clock: mean {statistics.mean(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f}); "
                  f"CPU: mean {statistics.mean(cpu_ratios):.3f} (min {min(cpu_ratios):.3f}, max {max(cpu_ratios):.3f}); "
                  f"same findings: {same}")
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
