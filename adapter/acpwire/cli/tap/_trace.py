"""The tap's trace: every line either side sent, one JSON object per line (JSONL).

The forwarding threads hand over each chunk as read, with its time, and go back to
forwarding (:meth:`Recorder.chunk`: one queue put); the recorder's own thread splits the
chunks into lines, parses each with :func:`json.loads`, names it (:func:`classify`), hands
the parsed message to the inspectors (the protocol checker, :mod:`._check`), masks its
secrets (:mod:`._mask`) and writes its record::

    {"t": 0.012345, "dir": "client->agent", "raw": "{...}", "method": "initialize",
     "id": 0, "kind": "request"}

with ``"violations"`` (and ``"info"``): ``[{"rule", "message", "spec"}]`` when the
inspectors found something; each violation is also one line on stderr unless quiet.
The last record, once both sides are done, sums the run up (``"kind": "summary"``, with
the violations found at the end: requests never answered).

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
from collections import Counter
from collections.abc import Sequence
from typing import Final, Literal, Protocol

from acpwire.cli.tap._mask import mask_in_place

__all__ = [
    "AGENT_TO_CLIENT",
    "CLIENT_TO_AGENT",
    "Direction",
    "Inspector",
    "Kind",
    "Note",
    "Recorder",
    "classify",
]

Direction = Literal["client->agent", "agent->client"]
Kind = Literal["request", "response", "notification", "invalid"]
CLIENT_TO_AGENT: Final[Direction] = "client->agent"
AGENT_TO_CLIENT: Final[Direction] = "agent->client"


class Note(Protocol):
    """What an inspector found (:class:`acpwire.conformance.Finding` is one)."""

    @property
    def rule(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def spec(self) -> str:
        """The spec section it rests on."""

    @property
    def level(self) -> Literal["violation", "info"]: ...


class Inspector(Protocol):
    """Receives each line of the run on the recorder's thread, in the order the tap read
    them: :meth:`inspect` each parsed message (before masking) with its direction,
    :meth:`unparsable` each line that is not JSON, :meth:`finish` once at the end. An
    inspector that raises is reported once on stderr and dropped; forwarding never waits
    for one."""

    def inspect(self, direction: Direction, message: object) -> Sequence[Note]: ...
    def unparsable(self, direction: Direction) -> Sequence[Note]: ...
    def finish(self) -> Sequence[Note]: ...


_END: Final = object()
_NOT_JSON: Final = object()


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
        report: bool = True,
    ) -> None:
        self._out = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
        self._start = start
        self._mask = mask
        self._inspectors = list(inspectors)
        self._inspected = bool(inspectors)
        self._report = report
        self._records = 0
        self._messages = 0
        self._counts: dict[str, Counter[str]] = {"violation": Counter(), "info": Counter()}
        self._said: set[str] = set()
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

    def chunk(self, direction: Direction, data: bytes, t: float | None = None) -> None:
        """Bytes read in ``direction`` at monotonic time ``t`` (default: now), queued
        before they are written on: so a request is always queued before its answer."""
        self._queue.put((direction, time.monotonic() if t is None else t, data))

    def end(self, direction: Direction, t: float | None = None) -> None:
        """End of input in ``direction``: a last line without its newline is recorded."""
        self._queue.put((direction, time.monotonic() if t is None else t, b""))

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
                    if self._inspected:
                        self._summary()
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
        self._messages += 1
        self._records += 1
        notes = self._inspect(direction, message if parsed else _NOT_JSON)
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
        self._notes(record, notes, f"{direction} line {self._records}")
        self._out.write(json.dumps(record, ensure_ascii=False) + "\n")

    def _inspect(self, direction: Direction, message: object) -> list[Note]:
        notes: list[Note] = []
        for inspector in list(self._inspectors):
            try:
                if message is _NOT_JSON:
                    notes += inspector.unparsable(direction)
                else:
                    notes += inspector.inspect(direction, message)
            except Exception as exc:
                self._inspectors.remove(inspector)
                _say(f"inspector {inspector!r} failed and is left out: {exc!r}")
        return notes

    def _notes(self, record: dict[str, object], notes: Sequence[Note], where: str) -> None:
        """Put ``notes`` on ``record`` (violations, info), count them, say them."""
        for level, field in (("violation", "violations"), ("info", "info")):
            found = [n for n in notes if n.level == level]
            if not found:
                continue
            record[field] = [{"rule": n.rule, "message": n.message, "spec": n.spec} for n in found]
            self._counts[level].update(n.rule for n in found)
            for n in found:
                line = f"{level} [{n.rule}] {where}: {n.message} ({n.spec})"
                # Violations each time; information (methods not checked) once each.
                if self._report and (level == "violation" or n.message not in self._said):
                    self._said.add(n.message)
                    _say(line)

    def _summary(self) -> None:
        notes: list[Note] = []
        for inspector in list(self._inspectors):
            try:
                notes += inspector.finish()
            except Exception as exc:
                _say(f"inspector {inspector!r} failed and is left out: {exc!r}")
        self._records += 1
        record: dict[str, object] = {
            "t": round(time.monotonic() - self._start, 6),
            "dir": None,
            "kind": "summary",
            "messages": self._messages,
        }
        self._notes(record, notes, "at the end")
        record.setdefault("violations", [])
        record["counts"] = {
            "violations": dict(sorted(self._counts["violation"].items())),
            "info": dict(sorted(self._counts["info"].items())),
        }
        self._out.write(json.dumps(record, ensure_ascii=False) + "\n")
        total = self._counts["violation"].total()
        if self._report and total:
            rules = ", ".join(f"{r} {n}" for r, n in self._counts["violation"].most_common())
            count = self._messages
            _say(
                f"{total} violation{'s' * (total != 1)} in {count} message{'s' * (count != 1)}"
                f" ({rules})"
            )

    def _fail(self, text: str) -> None:
        if not self._failed:
            self._failed = True
            _say(text)


def _say(text: str) -> None:
    with contextlib.suppress(OSError):
        os.write(2, f"acpwire tap: {text}\n".encode())
