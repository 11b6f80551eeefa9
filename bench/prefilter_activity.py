"""Where the prefilter is loose: which rules keep which files walked, and where they find something.

Usage:
    python bench/prefilter_activity.py CORPUS_DIR [--every 3]

For every `--every`-th Python file of the corpus (default rules, default settings, test files
treated as the engine treats them), it prints:
- how many files the prefilter sends to libcst and the walk, and how many of those have a finding;
- per rule, the files in which the prefilter keeps the rule active, and the files where it fires;
- the files in which a rule is the only one left active (the walks that rule alone costs).

A rule active in many files and firing in few is the next place to tighten `prefilter_needs`;
`bench/speed.py` checks that the prefilter still gives the same findings as `--no-prefilter`.
"""

from __future__ import annotations

import argparse
import ast
import collections
import sys
import time
import warnings
from pathlib import Path

from viewlint.analysis.module_index import build_index_from_ast
from viewlint.engine import is_test_path, lint_text
from viewlint.newer_syntax import parse_source
from viewlint.prefilter import reduce
from viewlint.registry import all_rules
from viewlint.settings import Settings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--every", type=int, default=3, help="take every N-th file (default: 3)")
    args = parser.parse_args()
    files = sorted(p for p in args.corpus.rglob("*.py") if p.is_file())[::args.every]
    settings = Settings()
    registry = all_rules()
    active_files: collections.Counter[str] = collections.Counter()
    firing_files: collections.Counter[str] = collections.Counter()
    alone: collections.Counter[str] = collections.Counter()
    walked = with_findings = 0
    kept_chars = total_chars = 0
    started = time.perf_counter()
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        relative = str(path.relative_to(args.corpus))
        rule_classes = [registry[c] for c in sorted(settings.codes_for(relative)) if c in registry]
        if is_test_path(relative):
            rule_classes = [c for c in rule_classes if not (c.hot_path_only or c.reports_a_cost)]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = parse_source(text)
        except (SyntaxError, ValueError, RecursionError):
            continue
        total_chars += len(text)
        reduction = reduce(text, tree, rule_classes, settings, build_index_from_ast(tree, text))
        if reduction is None:
            continue
        walked += 1
        kept_chars += len(reduction.text)
        codes = set().union(*reduction.active.values()) if reduction.active else {c.code for c in rule_classes}
        active_files.update(codes)
        if len(codes) == 1:
            alone.update(codes)
        fired = {d.code for d in lint_text(text, str(path), settings, relative)}
        firing_files.update(fired)
        with_findings += bool(fired)
    elapsed = time.perf_counter() - started
    print(f"{len(files)} files (every {args.every}th of {args.corpus}), {elapsed:.1f} s")
    print(f"walked: {walked} files ({walked / max(len(files), 1):.1%}), {with_findings} of them with a finding; "
          f"{kept_chars / max(total_chars, 1):.1%} of the characters reach libcst")
    print(f"{'rule':<7} {'active in':>9} {'fires in':>8} {'only rule':>9}")
    for code, count in active_files.most_common():
        print(f"{code:<7} {count:>9} {firing_files[code]:>8} {alone[code]:>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
