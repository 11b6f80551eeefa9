#!/usr/bin/env python3
"""Recall on probes of the kinds of code users write, against a baseline measured in the same run.

`bench/probes/` holds small snippets written the way scripts, training and evaluation loops, hooks,
Lightning modules and decoding loops are written (issue 26's "typical misses", and more of each
kind): each bug line ends in `# want: A|B|C|D` (the bug classes of `../shared/realbugs`: A views
kept alive, B lost writes, C hidden copies, D host syncs), and `# maybe: X (why)` marks a line where
the evidence is too thin to claim either way (not scored). A `want` line is found when viewlint
(`--select ALL`) reports a finding of that class on it (VL1xx A, VL2xx B, VL3xx C, VL4xx D). Findings
on other lines are listed, to be read: the probes have no clean twin for every line.

Usage:
    python bench/probes.py [--viewlint "viewlint"] [--baseline "env PYTHONPATH=/old/tree python -m viewlint"]

Each command is run from a folder of its own (so `python -m viewlint` imports what PYTHONPATH says).
A benchmark script, not a test.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

PROBES = Path(__file__).resolve().parent / "probes"
_MARK = re.compile(r"#\s*(want|maybe):\s*([ABCD])")
_CLASS = {"1": "A", "2": "B", "3": "C", "4": "D"}


def wanted() -> dict[tuple[str, int], str]:
    """(file name, line) -> the bug class a `want` marker names."""
    found = {}
    for path in sorted(PROBES.glob("*.py")):
        for row, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = _MARK.search(line)
            if match and match.group(1) == "want":
                found[(path.name, row)] = match.group(2)
    return found


def reported(command: str) -> dict[tuple[str, int], set[str]]:
    """(file name, line) -> the bug classes viewlint reports there."""
    with tempfile.TemporaryDirectory() as cwd:
        run = subprocess.run([*shlex.split(command), "--isolated", "--no-cache", "--select", "ALL", "--exit-zero",
                              "--output-format", "json", str(PROBES)], capture_output=True, text=True, cwd=cwd)
    if run.returncode != 0:
        sys.exit(f"{command} failed:\n{run.stderr[-2000:]}")
    found: dict[tuple[str, int], set[str]] = collections.defaultdict(set)
    for item in json.loads(run.stdout):
        code = item["code"]
        if code[2] in _CLASS:
            found[(Path(item["filename"]).name, item["location"]["row"])].add(_CLASS[code[2]])
    return found


def score(command: str, wants: dict[tuple[str, int], str]) -> tuple[dict[str, list[int]], list[tuple[str, int]], list[tuple[str, int]]]:
    got = reported(command)
    per_class: dict[str, list[int]] = {k: [0, 0] for k in "ABCD"}
    missed = []
    for key, kind in wants.items():
        per_class[kind][1] += 1
        if kind in got.get(key, set()):
            per_class[kind][0] += 1
        else:
            missed.append(key)
    others = sorted(key for key in got if key not in wants)
    return per_class, missed, others


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--viewlint", default="viewlint", help="the command to score (default: viewlint)")
    parser.add_argument("--baseline", help="a second command, scored in the same run")
    args = parser.parse_args()
    wants = wanted()
    runs = [("now", args.viewlint)] + ([("baseline", args.baseline)] if args.baseline else [])
    results = {name: score(command, wants) for name, command in runs}
    print(f"{len(wants)} wanted lines in {len(list(PROBES.glob('*.py')))} probes")
    print(f"{'class':<6}" + "".join(f"{name:>12}" for name, _ in runs))
    for kind in "ABCD":
        print(f"{kind:<6}" + "".join(f"{results[name][0][kind][0]:>8}/{results[name][0][kind][1]:<3}" for name, _ in runs))
    total = {name: sum(v[0] for v in results[name][0].values()) for name, _ in runs}
    print(f"{'all':<6}" + "".join(f"{total[name]:>8}/{len(wants):<3}" for name, _ in runs))
    per_class, missed, others = results["now"]
    print("\nmissed (now):")
    for name, row in missed:
        print(f"  {name}:{row}")
    print("\nfindings on lines with no `want` (read them):")
    for name, row in others:
        print(f"  {name}:{row}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
