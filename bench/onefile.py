"""One-file scaling: time and peak memory of viewlint on one generated file of growing size.

Usage:
    python bench/onefile.py [--sizes 0.25,0.5,1,2,4,8] [--timeout 1800]

Each file repeats one block of PyTorch code (a module whose `forward` has a finding of every
family: a view cached, a write lost, redundant copies, host syncs) until it reaches the size in
MB; the blocks differ only in their names. viewlint runs once per file in a fresh process
(`check --no-cache -j1 --select ALL`) and its peak resident set is read from /proc while it
runs. Every time is printed as a ratio to `ast.parse` of the same file in the same run, and to
the smallest file's time: linear cost means the time ratio follows the size ratio.
"""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from speed import _peak_of_tree_kib  # noqa: E402 - the same /proc reading as the corpus benchmark

BLOCK = '''

class Block{i}(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.cache{i} = {{}}
        self.weight = torch.nn.Parameter(torch.randn(8, 8))

    def forward(self, x, key):
        pieces = torch.split(x, 2)
        self.cache{i}[key] = pieces[0]
        idx = torch.tensor([0, 1])
        x[idx].copy_(x[:2] * 2)
        y = x.contiguous().contiguous()
        w = self.weight.t().contiguous()
        n = x.max().item()
        if x.any():
            y = y + 1
        return y @ w + n
'''

HEADER = "import torch\n"


def generate(path: Path, megabytes: float) -> int:
    target = int(megabytes * 1_000_000)
    parts = [HEADER]
    size = len(HEADER)
    i = 0
    while size < target:
        block = BLOCK.format(i=i)
        parts.append(block)
        size += len(block)
        i += 1
    path.write_text("".join(parts), encoding="utf-8")
    return i


def time_ast(path: Path) -> float:
    data = path.read_bytes()
    start = time.perf_counter()
    ast.parse(data)
    return time.perf_counter() - start


def run_viewlint(path: Path, timeout: float) -> tuple[float, int, int, str]:
    """Seconds, peak RSS (KiB), exit code and the summary line of one run."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    command = [sys.executable, "-m", "viewlint", "check", "--no-cache", "-j", "1", "--select", "ALL",
               "--output-format", "concise", str(path)]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    peak = 0
    output = b""
    while True:
        try:
            output, _ = process.communicate(timeout=0.05)
            break
        except subprocess.TimeoutExpired:
            peak = max(peak, _peak_of_tree_kib(process.pid))
            if time.perf_counter() - start > timeout:
                process.kill()
                output, _ = process.communicate()
                return time.perf_counter() - start, peak, -9, "killed (timeout)"
    seconds = time.perf_counter() - start
    lines = output.decode("utf-8", "replace").strip().splitlines()
    return seconds, peak, process.returncode, lines[-1] if lines else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0.25,0.5,1,2,4,8", help="file sizes in MB, comma-separated")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds before a run is killed")
    args = parser.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as directory:
        rows = []
        for megabytes in sizes:
            path = Path(directory) / f"generated_{megabytes:g}mb.py"
            blocks = generate(path, megabytes)
            ast_seconds = time_ast(path)
            seconds, peak, code, summary = run_viewlint(path, args.timeout)
            rows.append((megabytes, blocks, ast_seconds, seconds, peak, code, summary))
            print(f"{megabytes:>5g} MB {blocks:>6} blocks: viewlint {seconds:8.2f} s ({seconds / ast_seconds:6.1f}x ast.parse), "
                  f"peak RSS {peak / 1024:7.1f} MiB, exit {code}: {summary}", flush=True)
        base_mb, _, _, base_seconds, _, _, _ = rows[0]
        print()
        print("size ratio   time ratio (vs the smallest file)   peak RSS")
        for megabytes, _, _, seconds, peak, _, _ in rows:
            print(f"{megabytes / base_mb:>9.0f}x   {seconds / base_seconds:>9.1f}x{'':27}{peak / 1024:7.1f} MiB")
        largest = rows[-1]
        ratio = largest[3] / base_seconds
        size_ratio = largest[0] / base_mb
        print(f"\nlargest/smallest: {ratio:.1f}x the time for {size_ratio:.0f}x the size "
              f"({'linear enough' if ratio <= 1.25 * size_ratio else 'SUPERLINEAR'}); "
              f"peak RSS {largest[4] / 1024:.0f} MiB ({'under' if largest[4] < 2 * 1024 * 1024 else 'OVER'} 2 GiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
