"""Speed benchmark: viewlint against the parse floor (ast, libcst) and TorchFix, on one corpus.

Usage:
    python bench/speed.py CORPUS_DIR [--torchfix-venv DIR] [--jobs 2] [--skip-libcst] [--rounds 5]

Every figure is printed as a ratio to a single-process `ast.parse` of every file of the
same corpus, measured in the same run (these machines are noisy: compare ratios, not
seconds). Also checks that the fast path (prefilter) and the full libcst path report
exactly the same findings.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def python_files(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.rglob("*.py") if p.is_file())


def time_ast(files: list[Path]) -> float:
    start = time.perf_counter()
    for path in files:
        try:
            ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            pass
    return time.perf_counter() - start


def time_libcst(files: list[Path]) -> float:
    import libcst

    start = time.perf_counter()
    for path in files:
        try:
            libcst.parse_module(path.read_bytes())
        except Exception:
            pass
    return time.perf_counter() - start


# Run viewlint as an installed package runs: with its bytecode cached (some sandboxes set
# PYTHONDONTWRITEBYTECODE, which would recompile viewlint's modules on every start).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _peak_kib(pid: int) -> int:
    """VmHWM (peak resident set) of a live process, in KiB; 0 if it is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _descendants(pid: int) -> list[int]:
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as children:
                    stack.extend(int(child) for child in children.read().split())
        except OSError:
            pass
    return found


def _peak_of_tree_kib(pid: int) -> int:
    """The largest VmHWM among a live process and its descendants (viewlint lints in a worker process), in KiB."""
    return max([0, *(_peak_kib(child) for child in _descendants(pid))])


def viewlint(args: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess, int]:
    """Run viewlint as a user would; returns wall time, the process and the peak resident memory
    of its largest process (main or worker) in MiB, sampled from /proc every 20 ms (0 where
    /proc is missing). The rusage of children would also count the benchmark's own memory,
    copied into the child before it starts viewlint."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-m", "viewlint", *args], cwd=cwd, stdout=out, stderr=err, env=ENV)
        peak = 0
        while process.poll() is None:
            peak = max(peak, _peak_of_tree_kib(process.pid))
            time.sleep(0.02)
        elapsed = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        result = subprocess.CompletedProcess(process.args, process.returncode, out.read().decode(), err.read().decode())
    if result.returncode not in (0, 1):
        sys.exit(f"viewlint failed ({result.returncode}): {result.stderr[-2000:]}")
    return elapsed, result, peak // 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--torchfix-venv", type=Path, default=None, help="a venv with torchfix installed")
    parser.add_argument("--skip-libcst", action="store_true", help="skip the slow libcst parse baseline")
    parser.add_argument("--skip-full", action="store_true", help="skip the --no-prefilter comparison run")
    parser.add_argument("--rounds", type=int, default=1,
                        help="cold viewlint -jN runs to time, each between two ast.parse baselines; the target uses their median ratio")
    options = parser.parse_args()

    corpus = options.corpus.resolve()
    files = python_files(corpus)
    size = sum(p.stat().st_size for p in files)
    print(f"corpus: {corpus} ({len(files)} files, {size / 1e6:.1f} MB), {os.cpu_count()} cores")
    rows: list[tuple[str, float, str]] = []

    class Rows(list):  # prints each measurement as it lands (a long run shows progress)
        def append(self, row: tuple[str, float, str]) -> None:
            super().append(row)
            print(f"  {row[0]}: {row[1]:.2f} s {row[2]}", flush=True)

    rows = Rows()

    import importlib.util

    spec = importlib.util.find_spec("viewlint")
    assert spec is not None and spec.origin is not None, "viewlint is not installed"
    package = Path(spec.origin).resolve().parent
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package), str(package.parent / "rules")], env=ENV,
                   capture_output=True)
    t_ast = time_ast(files)
    rows.append(("ast.parse, 1 process (baseline)", t_ast, ""))
    t_cst = None
    if not options.skip_libcst:
        t_cst = time_libcst(files)
        rows.append(("libcst.parse_module, 1 process", t_cst, ""))

    work = Path(tempfile.mkdtemp(prefix="viewlint-bench-"))
    cache = work / "cache"
    common = ["--isolated", "--exit-zero", "-q", "--output-format", "json", str(corpus)]
    t_j1, r_j1, rss_j1 = viewlint(["--no-cache", "-j", "1", *common], work)
    rows.append(("viewlint cold, -j1", t_j1, f"peak RSS {rss_j1} MiB"))
    t_jn, r_jn, rss_jn = viewlint(["--no-cache", "-j", str(options.jobs), *common], work)
    rows.append((f"viewlint cold, -j{options.jobs}", t_jn, f"peak RSS {rss_jn} MiB"))
    same_jobs = r_j1.stdout == r_jn.stdout
    viewlint(["--cache-dir", str(cache), "-j", str(options.jobs), *common], work)  # fill the cache
    t_warm, r_warm, _ = viewlint(["--cache-dir", str(cache), "-j", str(options.jobs), *common], work)
    rows.append(("viewlint warm (cache, nothing changed)", t_warm, ""))

    # Touch one file: a copy of the corpus so the original stays untouched.
    copy = work / "corpus"
    shutil.copytree(corpus, copy)
    copy_common = [*common[:-1], str(copy)]
    viewlint(["--cache-dir", str(cache), "-j", str(options.jobs), *copy_common], work)
    target = max(python_files(copy), key=lambda p: p.stat().st_size)
    with open(target, "a", encoding="utf-8") as handle:
        handle.write("\n# touched\n")
    t_touch, _, _ = viewlint(["--cache-dir", str(cache), "-j", str(options.jobs), *copy_common], work)
    rows.append(("viewlint, one file touched", t_touch, ""))

    differences = None
    if not options.skip_full:
        t_full, r_full, _ = viewlint(["--no-cache", "--no-prefilter", "-j", str(options.jobs), *common], work)
        rows.append((f"viewlint --no-prefilter, -j{options.jobs}", t_full, ""))
        fast = {json.dumps(d, sort_keys=True) for d in json.loads(r_jn.stdout)}
        full = {json.dumps(d, sort_keys=True) for d in json.loads(r_full.stdout)}
        differences = len(fast ^ full)

    t_tf = None
    if options.torchfix_venv is not None:
        flake8 = options.torchfix_venv / "bin" / "flake8"
        start = time.perf_counter()
        subprocess.run([str(flake8), "--isolated", "--select", "TOR", "-j", str(options.jobs), str(corpus)], capture_output=True, text=True)
        t_tf = time.perf_counter() - start
        rows.append((f"TorchFix (flake8 --select TOR -j{options.jobs})", t_tf, ""))

    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "viewlint", "--version"], capture_output=True, env=ENV)
    t_version = time.perf_counter() - start
    small = work / "small.py"
    small.write_text("import torch\nbuf = torch.zeros(8, 4)\nbuf[[3]].fill_(2.0)\n")
    t_small, _, _ = viewlint(["--no-cache", "--isolated", "--exit-zero", "-q", str(small)], work)

    # With --rounds N: N more cold runs, each between two `ast.parse` baselines, and its ratio to their mean. On
    # a machine whose speed drifts, a baseline taken on both sides of a run tracks the speed during it better than
    # one taken before it, and the median of the rounds says more than one ratio of measurements minutes apart.
    ratios = [t_jn / t_ast]
    if options.rounds > 1:
        ratios = []
        after = time_ast(files)
        for _ in range(options.rounds):
            before = after
            cold, _, _ = viewlint(["--no-cache", "-j", str(options.jobs), *common], work)
            after = time_ast(files)
            ratios.append(cold / ((before + after) / 2))
            print(f"  round {len(ratios)}: ast.parse {before:.2f} s and {after:.2f} s around viewlint cold "
                  f"-j{options.jobs} {cold:.2f} s: {ratios[-1]:.2f}x", flush=True)
    ratio = statistics.median(ratios)
    if len(ratios) > 1:
        print(f"cold -j{options.jobs} / ast.parse over {len(ratios)} bracketed rounds: "
              + ", ".join(f"{r:.2f}x" for r in ratios) + f"; median {ratio:.2f}x")

    findings = len(json.loads(r_jn.stdout))
    print(f"findings: {findings}")
    print()
    print(f"| measurement | seconds | x ast.parse | note |")
    print(f"|---|---:|---:|---|")
    for name, seconds, note in rows:
        print(f"| {name} | {seconds:.2f} | {seconds / t_ast:.2f} | {note} |")
    print()
    targets = [
        (f"cold -j{options.jobs} <= 3.0x ast.parse (stretch 2.0x)" + (f", median of {len(ratios)} rounds" if len(ratios) > 1 else ""),
         ratio <= 3.0, f"{ratio:.2f}x"),
        ("cold -j1 <= 0.5x libcst.parse_module", t_cst is not None and t_j1 / t_cst <= 0.5, f"{t_j1 / t_cst:.2f}x" if t_cst else "skipped"),
        ("warm <= 5% of cold", t_warm / t_jn <= 0.05, f"{100 * t_warm / t_jn:.1f}%"),
        ("one file touched <= 10% of cold", t_touch / t_jn <= 0.10, f"{100 * t_touch / t_jn:.1f}%"),
        ("10x faster than TorchFix", t_tf is not None and t_tf / t_jn >= 10, f"{t_tf / t_jn:.1f}x" if t_tf else "not measured"),
        ("--version <= 0.2 s", t_version <= 0.2, f"{t_version:.2f} s"),
        ("one small file <= 0.5 s", t_small <= 0.5, f"{t_small:.2f} s"),
        ("peak RSS <= 300 MiB per worker", max(rss_j1, rss_jn) <= 300, f"{max(rss_j1, rss_jn)} MiB"),
        ("-j1 and -jN output identical", same_jobs, str(same_jobs)),
        ("prefilter vs full path: 0 differences", differences == 0, "skipped" if differences is None else f"{differences} differences"),
    ]
    print("| target | result | pass |")
    print("|---|---|---|")
    for name, ok, value in targets:
        print(f"| {name} | {value} | {'pass' if ok else 'FAIL'} |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
