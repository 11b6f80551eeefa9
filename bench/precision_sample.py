"""Sample viewlint findings for a precision audit (issue 27).

Usage: python precision_sample.py [--seed N] [--per-rule K] findings-<lib>.json ...

For each input file (one library) and each rule: every finding if the rule has
<= K findings, else random.Random(seed).sample(findings, K) over the findings in
output order. Prints one markdown table per library and rule, with an empty
verdict column to fill in.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import random


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--seed", type=int, default=27)
    ap.add_argument("--per-rule", type=int, default=12)
    args = ap.parse_args()
    print(f"seed = {args.seed}, per rule = {args.per_rule}")
    for path in args.files:
        lib = os.path.basename(path)[len("findings-"):-len(".json")]
        with open(path) as fh:
            findings = json.load(fh)
        by_rule: dict[str, list] = collections.defaultdict(list)
        for f in findings:
            by_rule[f["code"]].append(f)
        print(f"\n## {lib}: {len(findings)} findings")
        for code in sorted(by_rule):
            items = by_rule[code]
            if len(items) > args.per_rule:
                # one generator per (library, rule), seeded the same way each time
                rng = random.Random(f"{args.seed}:{lib}:{code}")
                chosen = rng.sample(items, args.per_rule)
            else:
                chosen = list(items)
            chosen.sort(key=lambda f: (f["filename"], f["location"]["row"]))
            print(f"\n### {lib} {code}: {len(items)} findings, sample {len(chosen)}\n")
            print("| finding | rule | verdict | reason |\n|---|---|---|---|")
            for f in chosen:
                loc = f"{f['filename']}:{f['location']['row']}"
                msg = f["message"].replace("|", "\\|")
                print(f"| `{loc}` | {code} | ? | {msg} |")


if __name__ == "__main__":
    main()
