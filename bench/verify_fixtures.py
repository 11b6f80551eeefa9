"""Speed benchmark for --verify: verify every shipped fixture in one command, against `import torch`.

Usage:
    python bench/verify_fixtures.py [--repeat 3] [--device cpu]

Times, in the same run (these machines are noisy: compare ratios, not seconds):
  - `python -c "import torch"`: the floor, since the verify child must import torch once;
  - every fixture run plainly as `__main__` in one interpreter (runpy): what the fixtures cost
    themselves (one imports `torch.compile`, which is not cheap);
  - `python -m viewlint check --verify fixtures/` (lint + instrument + one child + verdicts);
  - the same without --verify (the lint alone).
Each is run ``--repeat`` times; the minimum is reported, with the ratio of verify to the
torch import. The goal is that torch's import dominates, not the instrumentation.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(command: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    return time.perf_counter() - start, completed


def best(command: list[str], repeat: int) -> tuple[float, subprocess.CompletedProcess]:
    runs = [timed(command) for _ in range(repeat)]
    return min(runs, key=lambda run: run[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--device", default="cpu", choices=["auto", "cpu", "cuda"])
    args = parser.parse_args()

    lint = [sys.executable, "-m", "viewlint", "check", "--isolated", "--no-cache", "--select", "ALL",
            "--output-format", "json", "fixtures"]
    torch_import, _ = best([sys.executable, "-c", "import torch"], args.repeat)
    plain = ("import runpy, sys, pathlib, torch\n"
             "for p in sorted(pathlib.Path('fixtures').glob('VL*/*.py')):\n"
             "    try: runpy.run_path(str(p), run_name='__main__')\n"
             "    except BaseException: pass\n")
    plain_run, _ = best([sys.executable, "-c", plain], args.repeat)
    lint_only, _ = best(lint, args.repeat)
    verify, completed = best([*lint, "--verify", "--device", args.device], args.repeat)
    findings = json.loads(completed.stdout)
    statuses = Counter(f["verdict"]["status"] for f in findings if f.get("verdict"))
    files = len({f["filename"] for f in findings})

    print(f"fixtures verified: {len(findings)} findings in {files} files; "
          + ", ".join(f"{count} {status}" for status, count in statuses.most_common()))
    print(f"python -c 'import torch'     {torch_import:7.2f} s   1.00x")
    print(f"fixtures run plainly (runpy) {plain_run:7.2f} s   {plain_run / torch_import:.2f}x")
    print(f"viewlint check (lint only)   {lint_only:7.2f} s   {lint_only / torch_import:.2f}x")
    print(f"viewlint check --verify      {verify:7.2f} s   {verify / torch_import:.2f}x")
    print(f"verify beyond lint + plain run (instrumentation, probes, process): {verify - lint_only - plain_run:+.2f} s")


if __name__ == "__main__":
    main()
