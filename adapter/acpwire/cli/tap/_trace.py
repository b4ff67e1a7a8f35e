"""The tap's trace: every line either side sent, one JSON object per line (JSONL).

The forwarding threads hand over each chunk as read, with its time, and go back to
forwarding (:meth:`Recorder.chunk`: one queue put); the recorder's own thread splits the
chunks into lines, parses each with :func:`json.loads`, names it (:func:`classify`), hands
the parsed message to the inspectors (the seam where schema validation will plug in),
masks its secrets (:mod:`._mask`) and writes its record::

    {"t": 0.012345, "dir": "client->agent", "raw": "{...}", "method": "initialize",
     "id": 0, "kind": "request"}

``t``: monotonic seconds since the tap started, when the line's last byte was read;
``raw``: the line as text (bytes that are not UTF-8 as U+FFFD), or, when something was
masked, the message encoded again with the secrets replaced (and ``"masked": true``);
``method``: a response names the method of the request it answers; ``kind``: ``request``,
``response``, ``notification`` or ``invalid`` (not JSON, not an object, a batch...).
Blank lines are not recorded.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Final, Literal

from acpwire.cli.tap._mask import mask_in_place

__all__ = [
    "AGENT_TO_CLIENT",
    "CLIENT_TO_AGENT",
    "Direction",
    "Inspector",
    "Kind",
    "Recorder",
    "classify",
]

Direction = Literal["client->agent", "agent->client"]
Kind = Literal["request", "response", "notification", "invalid"]
CLIENT_TO_AGENT: Final[Direction] = "client->agent"
AGENT_TO_CLIENT: Final[Direction] = "agent->client"

Inspector = Callable[[Direction, object], None]
"""Receives each parsed message (before masking) with its direction, on the recorder's
thread: the seam for checking messages against the schema (not done yet). An inspector
that raises is reported once on stderr and dropped; forwarding never waits for one."""

_END: Final = object()


def classify(message: object) -> tuple[Kind, str | None, object]:
    """(kind, method, id) of a parsed line; a response's method is None here."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return "invalid", None, None
    method = message.get("method")
    if isinstance(method, str):
        return ("request" if "id" in message else "notification"), method, message.get("id")
    if "id" in message and ("result" in message or "error" in message):
        return "response", None, message["id"]
    return "invalid", None, message.get("id")


def _key(msg_id: object) -> str:
    return json.dumps(msg_id)  # 1 and "1" are different ids


class Recorder:
    """Writes the trace of one tap run to ``fd`` from a thread of its own."""

    def __init__(
        self,
        fd: int,
        *,
        start: float,
        mask: bool = True,
        inspectors: Sequence[Inspector] = (),
    ) -> None:
        self._out = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
        self._start = start
        self._mask = mask
        self._inspectors = list(inspectors)
        self._queue: queue.SimpleQueue[tuple[Direction, float, bytes] | object] = (
            queue.SimpleQueue()
        )
        self._partial: dict[Direction, bytearray] = {
            CLIENT_TO_AGENT: bytearray(),
            AGENT_TO_CLIENT: bytearray(),
        }
        # Requests waiting for an answer, by the direction they went: id -> method.
        self._pending: dict[Direction, dict[str, str]] = {CLIENT_TO_AGENT: {}, AGENT_TO_CLIENT: {}}
        self._failed = False
        self._thread = threading.Thread(target=self._run, name="acpwire-tap-trace", daemon=True)
        self._thread.start()

    def chunk(self, direction: Direction, data: bytes) -> None:
        """Bytes just forwarded in ``direction`` (called by the forwarding threads)."""
        self._queue.put((direction, time.monotonic(), data))

    def end(self, direction: Direction) -> None:
        """End of input in ``direction``: a last line without its newline is recorded."""
        self._queue.put((direction, time.monotonic(), b""))

    def close(self) -> None:
        """Record what is queued, and any last line without its newline; close the file."""
        self._queue.put(_END)
        self._thread.join()

    def _run(self) -> None:
        out = self._out
        try:
            while True:
                item = self._queue.get()
                if item is _END:
                    for direction, rest in self._partial.items():
                        if rest:
                            self._line(direction, time.monotonic(), bytes(rest))
                            rest.clear()
                    break
                assert isinstance(item, tuple)
                self._split(*item)
                if self._queue.empty():
                    out.flush()  # readable as it grows, and complete up to a crash
        except Exception as exc:  # the trace is lost, the forwarding goes on
            self._fail(f"cannot write the trace: {exc!r}")
            while self._queue.get() is not _END:  # keep draining: the queue never grows
                pass
        finally:
            try:
                out.close()
            except OSError as exc:
                self._fail(f"cannot write the trace: {exc}")

    def _split(self, direction: Direction, t: float, data: bytes) -> None:
        buffer = self._partial[direction]
        if not data:  # end of input
            if buffer:
                self._line(direction, t, bytes(buffer))
                buffer.clear()
            return
        start = 0
        if buffer:
            newline = data.find(b"\n")
            if newline < 0:
                buffer += data
                return
            buffer += data[:newline]
            self._line(direction, t, bytes(buffer))
            buffer.clear()
            start = newline + 1
        while (newline := data.find(b"\n", start)) >= 0:
            self._line(direction, t, data[start:newline])
            start = newline + 1
        if start < len(data):
            buffer += data[start:]

    def _line(self, direction: Direction, t: float, line: bytes) -> None:
        if not line.strip():
            return
        raw = line.decode("utf-8", errors="replace")
        message: object = None
        kind: Kind = "invalid"
        method: str | None = None
        msg_id: object = None
        try:
            message = json.loads(raw)
        except ValueError:
            parsed = False
        else:
            parsed = True
            kind, method, msg_id = classify(message)
        if kind == "request" and method is not None:
            self._pending[direction][_key(msg_id)] = method
        elif kind == "response":
            other = AGENT_TO_CLIENT if direction == CLIENT_TO_AGENT else CLIENT_TO_AGENT
            method = self._pending[other].pop(_key(msg_id), None)
        if parsed:
            self._inspect(direction, message)
        record: dict[str, object] = {
            "t": round(t - self._start, 6),
            "dir": direction,
            "raw": raw,
            "method": method,
            "id": msg_id,
            "kind": kind,
        }
        if (
            self._mask
            and parsed
            and mask_in_place(message, request_method=method if kind == "request" else None)
        ):
            record["raw"] = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
            record["masked"] = True
        self._out.write(json.dumps(record, ensure_ascii=False) + "\n")

    def _inspect(self, direction: Direction, message: object) -> None:
        for inspector in list(self._inspectors):
            try:
                inspector(direction, message)
            except Exception as exc:
                self._inspectors.remove(inspector)
                _say(f"inspector {inspector!r} failed and is left out: {exc!r}")

    def _fail(self, text: str) -> None:
        if not self._failed:
            self._failed = True
            _say(text)


def _say(text: str) -> None:
    with contextlib.suppress(OSError):
        os.write(2, f"acpwire tap: {text}\n".encode())
