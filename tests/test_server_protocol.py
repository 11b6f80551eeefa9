"""`viewlint server` at the wire: malformed headers, invalid requests, a file that takes forever to
lint, and `shutdown` latency. A raw JSON-RPC client writes bytes to a `viewlint server` subprocess
(the pygls client only writes well-formed messages) and reads its framed answers.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Optional

import pytest

pytest.importorskip("pygls")

from pygls.uris import from_fs_path  # noqa: E402

from conftest import ROOT  # noqa: E402
from viewlint.lsp.transport import Body, MessageFramer, Skipped  # noqa: E402


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawClient:
    """A `viewlint server` subprocess and a thread reading its framed messages."""

    def __init__(self, root: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen([sys.executable, "-m", "viewlint", "server"], cwd=root, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.messages: "queue.Queue[dict[str, Any]]" = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.root = root

    def _read(self) -> None:
        framer = MessageFramer()
        assert self.process.stdout is not None
        while True:
            chunk = self.process.stdout.read1(65536)  # type: ignore[attr-defined]
            if not chunk:
                return
            framer.feed(chunk)
            while True:
                item = framer.next()
                if item is None:
                    break
                if isinstance(item, Body):
                    self.messages.put(json.loads(item.data))

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.write(frame({"jsonrpc": "2.0", **message}))

    def response(self, msg_id: Any, timeout: float = 60) -> dict[str, Any]:
        """The answer to request ``msg_id`` (notifications and other answers are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.messages.get(timeout=max(deadline - time.monotonic(), 0.001))
            if "method" not in message and message.get("id") == msg_id:
                return message

    def initialize(self) -> None:
        self.send({"id": 1, "method": "initialize",
                   "params": {"processId": None, "rootUri": from_fs_path(str(self.root)), "capabilities": {}}})
        assert "result" in self.response(1)
        self.send({"method": "initialized", "params": {}})

    def shutdown_seconds(self, msg_id: int = 999) -> float:
        """Seconds from sending `shutdown` to its answer; then `exit`, and the process must end."""
        start = time.monotonic()
        self.send({"id": msg_id, "method": "shutdown"})
        answer = self.response(msg_id, timeout=30)
        elapsed = time.monotonic() - start
        assert answer.get("result", "missing") is None
        self.send({"method": "exit"})
        assert self.process.wait(timeout=10) == 0
        return elapsed

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def client(tmp_path: Path):
    raw = RawClient(tmp_path)
    try:
        yield raw
    finally:
        raw.close()


def hover_request(msg_id: int, uri: str) -> dict[str, Any]:
    return {"id": msg_id, "method": "textDocument/hover",
            "params": {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}}


@pytest.mark.parametrize("damage", [
    b"Content-Length: abc\r\n\r\n{}",                                  # a length that is not a number
    b"Content-Lenght: 12\r\n\r\n{\"x\": 1}   ",                        # a misspelt header
    b"Content-Length: 5\r\n\r\n{\"jsonrpc\": \"2.0\", \"id\": 7}",     # a body longer than its length
    b"Content-Length: 400\r\n\r\n{\"jsonrpc\": \"2.0\", \"id\": 8}",   # a body shorter than its length
    b"garbage without any header\r\n\r\n",
])
def test_the_server_answers_again_after_a_malformed_message(client: RawClient, damage: bytes) -> None:
    client.initialize()
    client.write(damage)
    client.send(hover_request(2, "file:///nowhere.py"))
    assert client.response(2, timeout=20)["result"] is None
    client.send(hover_request(3, "file:///nowhere.py"))
    assert client.response(3, timeout=20)["result"] is None
    assert client.shutdown_seconds() < 1.0


def test_a_body_that_is_not_json_gets_a_parse_error_and_the_next_request_an_answer(client: RawClient) -> None:
    client.initialize()
    client.write(b"Content-Length: 9\r\n\r\n{not json")
    error = client.response(None, timeout=20)
    assert error["error"]["code"] == -32700
    client.send(hover_request(2, "file:///nowhere.py"))
    assert client.response(2)["result"] is None


def test_requests_with_invalid_params_get_a_json_rpc_error(client: RawClient) -> None:
    client.initialize()
    client.send({"id": 2, "method": "textDocument/hover", "params": {"textDocument": 42}})
    assert client.response(2, timeout=20)["error"]["code"] == -32602
    client.send({"id": 3, "method": "textDocument/codeAction", "params": "nonsense"})
    assert client.response(3, timeout=20)["error"]["code"] == -32602
    client.send({"id": 4, "method": "workspace/executeCommand", "params": {"command": "viewlint.nope"}})
    assert client.response(4, timeout=20)["error"]["code"] == -32602
    client.send({"id": 5, "method": "viewlint/unknown", "params": {}})
    assert client.response(5, timeout=20)["error"]["code"] == -32601
    client.write(frame({"id": 6, "method": "textDocument/hover"}))  # no "jsonrpc": "2.0"
    assert client.response(6, timeout=20)["error"]["code"] == -32600
    client.send(hover_request(7, "file:///nowhere.py"))
    assert client.response(7, timeout=20)["result"] is None


def chain_file(links: int) -> str:
    """The file that froze the server: a subscript chain whose analysis was exponential in its length."""
    return "import torch\n\nx = torch.randn(2).contiguous()" + "[0]" * links + "\n"


def test_shutdown_is_answered_within_a_second_while_a_file_is_being_linted(client: RawClient, tmp_path: Path) -> None:
    client.initialize()
    path = tmp_path / "chain.py"
    text = chain_file(25)
    path.write_text(text)
    uri = from_fs_path(str(path))
    client.send({"method": "textDocument/didOpen",
                 "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}})
    for version in range(2, 6):  # edits while it lints: each supersedes the last
        client.send({"method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"text": text + "#" * version + "\n"}]}})
    client.send(hover_request(2, uri))  # a request that waits for the lint: cancelled by shutdown, not hung
    time.sleep(1.0)  # the lint is running now
    assert client.shutdown_seconds() < 1.0


def test_framer_resynchronises_on_the_header_after_damage() -> None:
    framer = MessageFramer()
    good = frame({"jsonrpc": "2.0", "method": "a"})
    framer.feed(b"Content-Length: x\r\n\r\n{}" + good + b"junk" + good)
    found: list[Optional[object]] = []
    while True:
        item = framer.next()
        if item is None:
            break
        found.append(item)
    bodies = [item for item in found if isinstance(item, Body)]
    assert [json.loads(body.data)["method"] for body in bodies] == ["a", "a"]
    assert any(isinstance(item, Skipped) for item in found)
