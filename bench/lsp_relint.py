"""Language-server re-lint latency: a 4,000-line model file, opened, then edited one line at a time.

Usage:
    python bench/lsp_relint.py [--lines 4000] [--edits 5] [--lint-delay 50] [--file PATH] [--pull]

Starts `viewlint server` over stdio, opens a generated file of realistic PyTorch code (model
blocks with attention, MLPs, caches, samplers, training steps, helpers: distinct names, findings
of several rules), waits for its diagnostics (the cold lint), then makes one-line edits inside
functions spread over the file and times each from `didChange` sent to `publishDiagnostics`
received for that version (the debounce, `--lint-delay` ms, included). Then a burst of five edits
20 ms apart, timed to the diagnostics of the last. The baseline is a lint from scratch of the
same text in this process (`viewlint check`'s path), measured in the same run; the findings the
server published last are checked against it. `--file` times a real file instead; `--pull`
plays a client that pulls diagnostics (`textDocument/diagnostic` sent right after each change).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import queue
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from viewlint.lsp.transport import Body, MessageFramer  # noqa: E402

BLOCK = '''

class Attention{i}(torch.nn.Module):
    """Multi-head attention with a KV cache, block {i}."""

    def __init__(self, hidden: int, heads: int, kv_heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.kv_heads = kv_heads
        self.head_dim = hidden // heads
        self.qkv = torch.nn.Linear(hidden, hidden + 2 * kv_heads * self.head_dim)
        self.out = torch.nn.Linear(hidden, hidden)
        self.cache = {{}}
        self.scale = self.head_dim ** -0.5

    def split_heads(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        q_size = self.heads * self.head_dim
        kv_size = self.kv_heads * self.head_dim
        q, k, v = x.split([q_size, kv_size, kv_size], dim=-1)
        batch, length = x.shape[0], x.shape[1]
        q = q.view(batch, length, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(batch, length, self.kv_heads, self.head_dim).transpose(1, 2)
        v = v.view(batch, length, self.kv_heads, self.head_dim).transpose(1, 2)
        return q, k, v

    def forward(self, hidden_states: torch.Tensor, request_id: str) -> torch.Tensor:
        qkv = self.qkv(hidden_states)
        q, k, v = self.split_heads(qkv)
        self.cache[request_id] = (k, v)
        repeats = self.heads // self.kv_heads
        k = k.repeat_interleave(repeats, dim=1)
        v = v.repeat_interleave(repeats, dim=1)
        scores = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        probs = torch.softmax(scores, dim=-1)
        context = torch.matmul(probs, v).transpose(1, 2).contiguous()
        if torch.isnan(context).any():
            context = torch.nan_to_num(context)
        batch, length = context.shape[0], context.shape[1]
        return self.out(context.view(batch, length, -1))


class FeedForward{i}(torch.nn.Module):
    def __init__(self, hidden: int, inner: int) -> None:
        super().__init__()
        self.gate = torch.nn.Linear(hidden, inner, bias=False)
        self.up = torch.nn.Linear(hidden, inner, bias=False)
        self.down = torch.nn.Linear(inner, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gated = torch.nn.functional.silu(self.gate(x)) * self.up(x)
        weight = self.down.weight.t().contiguous()
        return torch.matmul(gated, weight)


class Block{i}(torch.nn.Module):
    def __init__(self, hidden: int = 64, heads: int = 4) -> None:
        super().__init__()
        self.norm1 = torch.nn.LayerNorm(hidden)
        self.norm2 = torch.nn.LayerNorm(hidden)
        self.attention = Attention{i}(hidden, heads, heads // 2)
        self.mlp = FeedForward{i}(hidden, 4 * hidden)
        self.steps = 0

    def forward(self, x: torch.Tensor, request_id: str = "r") -> torch.Tensor:
        x = x + self.attention(self.norm1(x), request_id)
        x = x + self.mlp(self.norm2(x))
        self.steps += 1
        if x.abs().max().item() > 1e4:
            x = x.clamp(-1e4, 1e4)
        return x


class PagedCache{i}:
    """Pages of key/value rows handed out to requests."""

    def __init__(self, pages: int, page_size: int, width: int) -> None:
        self.storage = torch.zeros(pages, page_size, width)
        self.free = list(range(pages))
        self.owned = {{}}
        self.bytes_used = 0

    def allocate(self, request: str, rows: torch.Tensor) -> None:
        page = self.free.pop()
        index = torch.tensor([page])
        self.storage[index][0, : rows.shape[0]] = rows
        self.owned[request] = self.storage[page, : rows.shape[0]]
        self.bytes_used += rows.numel() * rows.element_size()

    def release(self, request: str) -> None:
        rows = self.owned.pop(request)
        self.bytes_used -= rows.numel() * rows.element_size()

    def gather(self, pages: list[int]) -> torch.Tensor:
        chosen = self.storage[pages]
        chosen.zero_()
        return chosen.reshape(-1, self.storage.shape[-1])


def sample_{i}(logits: torch.Tensor, temperature: float = 1.0, top_k: int = 8) -> list[int]:
    scaled = logits / max(temperature, 1e-5)
    values, indices = scaled.topk(top_k, dim=-1)
    probs = torch.softmax(values, dim=-1)
    choice = torch.multinomial(probs, 1)
    picked = indices.gather(-1, choice)
    return picked.squeeze(-1).tolist()


def train_step_{i}(model: torch.nn.Module, batch: torch.Tensor, optimizer: torch.optim.Optimizer) -> float:
    optimizer.zero_grad()
    output = model(batch)
    loss = output.float().pow(2).mean()
    loss.backward()
    optimizer.step()
    return float(loss)


def pad_rows_{i}(rows: list[torch.Tensor], width: int) -> torch.Tensor:
    out = torch.zeros(len(rows), width)
    for number, row in enumerate(rows):
        out[number, : row.shape[0]] = row
    mask = out != 0
    out.masked_fill(~mask, -1.0)
    return out
'''

HEADER = '''"""A generated model file for the language-server benchmark."""

from __future__ import annotations

import torch
'''


def realistic_file(lines: int) -> str:
    parts = [HEADER]
    i = 0
    while sum(part.count("\n") for part in parts) < lines:
        parts.append(BLOCK.format(i=i))
        i += 1
    return "".join(parts)


def edit_rows(text: str, count: int) -> list[int]:
    """Rows (0-based) of plain statements inside functions, spread over the file."""
    rows = [k for k, line in enumerate(text.splitlines()) if line.startswith("        ") and " = " in line
            and not line.rstrip().endswith(("(", ",", "[", "{", ":"))]
    step = max(1, len(rows) // (count + 1))
    return [rows[step * (n + 1)] for n in range(count)]


class Client:
    def __init__(self, root: Path) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "viewlint", "server"], cwd=root,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.inbox: "queue.Queue[dict[str, Any]]" = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        framer = MessageFramer()
        assert self.process.stdout is not None
        while True:
            chunk = self.process.stdout.read1(65536)  # type: ignore[attr-defined]
            if not chunk:
                return
            framer.feed(chunk)
            while (item := framer.next()) is not None:
                if isinstance(item, Body):
                    self.inbox.put(json.loads(item.data))

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def wait(self, predicate: Any, timeout: float = 120) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            message = self.inbox.get(timeout=max(0.001, deadline - time.monotonic()))
            if predicate(message):
                return message

    pull = False
    uri = ""
    requests = 100

    def published(self, version: int) -> dict[str, Any]:
        """The diagnostics of ``version``: pushed, or (``pull``) the answer to a pull sent now."""
        if not self.pull:
            return self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                             and m["params"].get("version") == version)
        self.requests += 1
        number = self.requests
        self.send({"id": number, "method": "textDocument/diagnostic", "params": {"textDocument": {"uri": self.uri}}})
        answer = self.wait(lambda m: m.get("id") == number)
        return {"params": {"diagnostics": answer["result"]["items"]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=4000)
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument("--lint-delay", type=int, default=50, help="the server's debounce, in ms")
    parser.add_argument("--file", type=Path, default=None, help="a real file to open instead of the generated one")
    parser.add_argument("--pull", action="store_true", help="pull diagnostics instead of waiting for pushed ones")
    args = parser.parse_args()

    from viewlint.engine import few_collections
    from viewlint.lsp.documents import lint_document

    text = args.file.read_text(encoding="utf-8") if args.file is not None else realistic_file(args.lines)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        path = root / "model.py"
        path.write_text(text)
        uri = path.as_uri()
        client = Client(root)
        client.pull, client.uri = args.pull, uri
        capabilities = {"textDocument": {"diagnostic": {}}} if args.pull else {}
        try:
            client.send({"id": 1, "method": "initialize", "params": {
                "processId": None, "rootUri": root.as_uri(), "capabilities": capabilities,
                "initializationOptions": {"settings": {"lintDelay": args.lint_delay}}}})
            client.wait(lambda m: m.get("id") == 1)
            client.send({"method": "initialized", "params": {}})
            start = time.perf_counter()
            client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": "python", "version": 1, "text": text}}})
            opened = client.published(1)
            server_cold = time.perf_counter() - start

            lines = text.splitlines(keepends=True)
            version = 1
            latencies = []
            for row in edit_rows(text, args.edits):
                lines[row] = lines[row].replace(" = ", " = 1 * ", 1) if version % 2 else lines[row].rstrip("\n") + "  # tuned\n"
                version += 1
                start = time.perf_counter()
                client.send({"method": "textDocument/didChange", "params": {
                    "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": "".join(lines)}]}})
                last = client.published(version)
                latencies.append(time.perf_counter() - start)

            burst_rows = edit_rows(text, 5)
            start = time.perf_counter()
            for row in burst_rows:
                lines[row] = lines[row].rstrip("\n") + "  # burst\n"
                version += 1
                client.send({"method": "textDocument/didChange", "params": {
                    "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": "".join(lines)}]}})
                time.sleep(0.02)
            last = client.published(version)
            burst = time.perf_counter() - start

            client.send({"id": 2, "method": "shutdown"})
            client.wait(lambda m: m.get("id") == 2)
            client.send({"method": "exit"})
            client.process.wait(timeout=10)
        finally:
            if client.process.poll() is None:
                client.process.kill()

        final = "".join(lines)
        scratch_times = []
        for _ in range(3):
            start = time.perf_counter()
            with few_collections():  # as `viewlint check` lints
                scratch = lint_document(final, path, root)
            scratch_times.append(time.perf_counter() - start)
        cold = statistics.median(scratch_times)
        published = {(d["range"]["start"]["line"] + 1, d["code"]) for d in last["params"]["diagnostics"]}
        expected = {(d.start.row, d.code) for d in scratch.diagnostics}
        median = statistics.median(latencies)
        print(f"file: {len(text.splitlines())} lines, {len(opened['params']['diagnostics'])} findings at open")
        print(f"lint from scratch (in process, median of 3): {cold:.3f} s")
        print(f"server: open -> diagnostics: {server_cold:.3f} s")
        mode = "pull answered" if args.pull else f"diagnostics pushed, debounce {args.lint_delay} ms included"
        print(f"server: one-line edit -> diagnostics ({mode}): "
              f"median {median:.3f} s over {len(latencies)} edits ({', '.join(f'{t:.3f}' for t in latencies)})")
        print(f"ratio re-lint / lint from scratch: {median / cold:.2f}")
        print(f"server: burst of 5 edits 20 ms apart -> diagnostics of the last: {burst:.3f} s")
        print(f"published findings equal a lint from scratch: {published == expected}")
        if published != expected:
            sys.exit(1)


if __name__ == "__main__":
    main()
