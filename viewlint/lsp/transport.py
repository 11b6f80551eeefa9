"""Reading LSP messages from a byte stream, robustly: a bad message costs that message, never the session.

pygls's own reader expects every header to be perfect: one malformed ``Content-Length`` and the
next bodies are read as header lines, so the server never answers again; a request whose
params do not fit the method's type is logged and never answered. Here:

- headers are found by searching for ``Content-Length: N`` (any case, any spacing) followed by
  a blank line; anything else before it (a malformed header block, stray bytes) is skipped;
- a body that is not JSON (a wrong length) answers a JSON-RPC Parse Error (id null), and the
  search for the next header starts again at that body's first byte, so the message after a
  too-long or too-short body is still read; a body that never completes while another header
  waits behind it is given up after ``STALL_SECONDS``;
- a request whose params cannot be read answers Invalid Params (-32602) with its id, a message
  that is not a JSON-RPC object answers Invalid Request (-32600).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Optional, Union

logger = logging.getLogger(__name__)

HEADER = re.compile(rb"content-length[ \t]*:[ \t]*(\d{1,12})[ \t]*\r?\n", re.IGNORECASE)
# Other headers (Content-Type) between Content-Length and the blank line.
OTHER_HEADER = re.compile(rb"[A-Za-z][A-Za-z0-9-]*[ \t]*:[^\r\n{}]*")
MAX_HEADER_BYTES = 8192
MAX_BODY_BYTES = 256 * 1024 * 1024
STALL_SECONDS = 1.0

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


@dataclass
class Body:
    """A message body cut from the stream."""

    data: bytes


@dataclass
class Skipped:
    """Bytes that were not a message (reported once, then dropped)."""

    data: bytes


class MessageFramer:
    """Cuts ``Content-Length``-framed bodies out of the bytes fed to it, resynchronising after damage."""

    def __init__(self) -> None:
        self.buffer = b""

    def feed(self, data: bytes) -> None:
        self.buffer += data

    def next(self) -> Optional[Union[Body, Skipped]]:
        """The next body or skipped run of bytes, or None when more bytes are needed."""
        while True:
            match = HEADER.search(self.buffer)
            if match is None:
                # Keep a tail that may be the start of a header; what is before it is not a message.
                keep = self.buffer[-64:] if len(self.buffer) > 64 else self.buffer
                dropped = self.buffer[: len(self.buffer) - len(keep)]
                self.buffer = keep
                return Skipped(dropped) if dropped.strip() else None
            if match.start() and self.buffer[: match.start()].strip():
                skipped, self.buffer = self.buffer[: match.start()], self.buffer[match.start():]
                return Skipped(skipped)
            self.buffer = self.buffer[match.start():]
            match = HEADER.match(self.buffer)
            assert match is not None
            end = self._end_of_headers(match.end())
            if end is None:
                return None  # more header bytes to come
            if end < 0:  # not a header block: drop this Content-Length line and search again
                skipped, self.buffer = self.buffer[: match.end()], self.buffer[match.end():]
                return Skipped(skipped)
            length = int(match.group(1))
            if length > MAX_BODY_BYTES:
                skipped, self.buffer = self.buffer[:end], self.buffer[end:]
                return Skipped(skipped)
            if len(self.buffer) < end + length:
                return None
            body, self.buffer = self.buffer[end:end + length], self.buffer[end + length:]
            return Body(body)

    def _end_of_headers(self, position: int) -> Optional[int]:
        """Where the body starts (after the blank line), None when the headers are incomplete, -1
        when what follows the Content-Length line is not a header block."""
        while True:
            newline = self.buffer.find(b"\n", position)
            if newline < 0:
                return None if len(self.buffer) - position < MAX_HEADER_BYTES else -1
            line = self.buffer[position:newline].rstrip(b"\r")
            if not line:
                return newline + 1
            if not OTHER_HEADER.fullmatch(line) or HEADER.match(self.buffer, position):
                return -1
            position = newline + 1

    def resume_at(self, body: Body) -> None:
        """A body that was not JSON: search for the next header from its first byte (the message after
        a too-long body starts inside it; after a too-short one, the rest is skipped as stray bytes)."""
        self.buffer = body.data + self.buffer

    def give_up_stalled(self) -> Optional[Skipped]:
        """When a body waits for bytes that do not come while a complete header waits inside it: drop
        the waiting message's header (the next search finds the later one)."""
        match = HEADER.match(self.buffer)
        if match is None or HEADER.search(self.buffer, match.end()) is None:
            return None
        skipped, self.buffer = self.buffer[: match.end()], self.buffer[match.end():]
        return Skipped(skipped)


def error_response(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def dispatch(protocol: Any, body: bytes, send: Callable[[dict[str, Any]], None]) -> bool:
    """Hand one body to the pygls protocol; answer what it cannot with a JSON-RPC error.
    False when the body is not JSON (the caller resynchronises)."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as error:
        send(error_response(None, PARSE_ERROR, f"Parse error: {error}"))
        return False
    msg_id = data.get("id") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("jsonrpc") != "2.0" or \
            ("method" in data and not isinstance(data["method"], str)):
        send(error_response(msg_id if isinstance(msg_id, (int, str)) else None, INVALID_REQUEST,
                            "Invalid Request: not a JSON-RPC 2.0 message"))
        return True
    try:
        message = protocol.structure_message(data)
    except Exception as error:  # noqa: BLE001 - the converter's errors: params that do not fit the method
        logger.warning("cannot read message %r: %s", data.get("method"), error)
        if "id" in data and "method" in data:
            send(error_response(msg_id, INVALID_PARAMS, f"Invalid params for {data['method']}"))
        return True
    try:
        protocol.handle_message(message)
    except Exception:  # noqa: BLE001 - a handler's error must not end the session
        logger.exception("error handling %r", data.get("method"))
    return True


def start_reader(stream: BinaryIO, deliver: Callable[[bytes], None]) -> threading.Thread:
    """Read ``stream`` on a daemon thread, handing each chunk to ``deliver`` (b"" at the end).
    A file descriptor is read directly: a daemon thread blocked inside a buffered reader's lock
    aborts the interpreter at exit."""
    try:
        descriptor = stream.fileno()
    except (AttributeError, OSError, ValueError):
        descriptor = -1

    def read(size: int) -> bytes:
        return os.read(descriptor, size) if descriptor >= 0 else stream.read(size)

    def run() -> None:
        while True:
            try:
                chunk = read(65536)
            except (OSError, ValueError):
                chunk = b""
            deliver(chunk)
            if not chunk:
                return

    thread = threading.Thread(target=run, name="viewlint-lsp-reader", daemon=True)
    thread.start()
    return thread


async def serve_stream(stream: BinaryIO, protocol: Any, stop: threading.Event) -> None:
    """The message loop: read, frame, dispatch, until the stream ends or ``stop`` is set."""
    loop = asyncio.get_running_loop()
    chunks: asyncio.Queue[bytes] = asyncio.Queue()
    start_reader(stream, lambda chunk: loop.call_soon_threadsafe(chunks.put_nowait, chunk))
    framer = MessageFramer()
    send = protocol._send_data
    ended = False
    while not stop.is_set() and not ended:
        item = framer.next()
        if isinstance(item, Body):
            if not dispatch(protocol, item.data, send):
                framer.resume_at(item)
            await asyncio.sleep(0)  # let handlers' tasks run between messages
            continue
        if isinstance(item, Skipped):
            logger.warning("skipped %d bytes that are not an LSP message", len(item.data))
            continue
        try:
            chunk = await asyncio.wait_for(chunks.get(), STALL_SECONDS if framer.buffer else None)
        except asyncio.TimeoutError:
            stalled = framer.give_up_stalled()
            if stalled is not None:
                logger.warning("gave up a message whose body never came (%d bytes)", len(stalled.data))
            continue
        if not chunk:
            ended = True
        framer.feed(chunk)
