"""NDJSON framing: split a byte stream into lines, and frame outgoing messages.

ACP over stdio sends one JSON message per line. :class:`LineReader` yields each complete
line without its terminator (``\\n``; ``\\r\\n`` tolerated) and skips blank lines. A line
longer than ``max_line_bytes`` is never buffered whole: it is consumed up to its newline,
discarded, and reported as an :class:`OversizedLine` so the connection can answer with
an error and carry on (the official SDK crashed or reassembled such lines).

This module knows nothing about JSON-RPC or ACP; it imports only the stdlib, and anyio
when a :class:`LineReader` is made (framing an outgoing line needs no event loop).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from anyio.abc import ByteReceiveStream

DEFAULT_MAX_LINE_BYTES: Final = 32 * 1024 * 1024
DEFAULT_CHUNK_BYTES: Final = 64 * 1024

_BLANK: Final = b" \t\r"
HEAD_BYTES: Final = 512
"""How much of an oversized line is kept (:attr:`OversizedLine.head`)."""


@dataclass(frozen=True, slots=True)
class OversizedLine:
    """A line that exceeded the limit; its bytes were read and thrown away."""

    size: int
    """Length of the discarded line in bytes, without its terminator."""
    limit: int
    head: bytes = field(default=b"", compare=False, repr=False)
    """Its first :data:`HEAD_BYTES` bytes (where a request's ``id`` usually is)."""

    def describe(self) -> str:
        return f"message of {self.size} bytes exceeds the limit of {self.limit} bytes"


class LineReader:
    """Async iterator of ``bytes`` lines (or :class:`OversizedLine`) from a byte stream.

    Ends at end of stream; a final line without a newline is still delivered. At most
    ``max_line_bytes`` plus one received chunk is held in memory at any time.
    """

    def __init__(
        self,
        stream: ByteReceiveStream,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    ) -> None:
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be positive")
        from anyio import EndOfStream  # here, not above: see the module's docstring

        self._end_of_stream = EndOfStream
        self._stream = stream
        self._limit = max_line_bytes
        self._chunk_bytes = chunk_bytes
        self._buf = bytearray()
        self._scanned = 0  # bytes of _buf already known to hold no newline
        self._discarded: int | None = None  # bytes dropped so far of an oversized line
        self._head = b""  # the start of the oversized line being dropped
        self._ready: OversizedLine | None = None
        self._eof = False

    @property
    def buffered(self) -> int:
        """Bytes currently held (diagnostics and tests)."""
        return len(self._buf)

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> bytes | OversizedLine:
        while True:
            item = self._next_buffered()
            if item is not None:
                return item
            if self._eof:
                return self._finish()
            try:
                chunk = await self._stream.receive(self._chunk_bytes)
            except self._end_of_stream:
                self._eof = True
                continue
            self._feed(chunk)

    def _feed(self, chunk: bytes) -> None:
        if self._discarded is None:
            self._buf += chunk
            return
        newline = chunk.find(b"\n")
        if newline < 0:
            self._discarded += len(chunk)
            return
        size = self._discarded + _content_length(chunk, newline)
        self._ready = OversizedLine(size, self._limit, self._head)
        self._discarded = None
        self._buf = bytearray(chunk[newline + 1 :])
        self._scanned = 0

    def _next_buffered(self) -> bytes | OversizedLine | None:
        if self._ready is not None:
            ready, self._ready = self._ready, None
            return ready
        buf = self._buf
        while True:
            newline = buf.find(b"\n", self._scanned)
            if newline < 0:
                self._scanned = len(buf)
                # +1 leaves room for a '\r' whose '\n' has not arrived yet.
                if len(buf) > self._limit + 1:
                    self._discarded = len(buf)
                    self._head = bytes(buf[:HEAD_BYTES])
                    buf.clear()
                    self._scanned = 0
                return None
            length = _content_length(buf, newline)
            self._scanned = 0
            if length > self._limit:
                head = bytes(buf[: min(length, HEAD_BYTES)])
                del buf[: newline + 1]
                return OversizedLine(length, self._limit, head)
            line = bytes(buf[:length])
            del buf[: newline + 1]
            if line and not (line[0] in _BLANK and not line.strip()):
                return line

    def _finish(self) -> bytes | OversizedLine:
        if self._discarded is not None:
            size, self._discarded = self._discarded + len(self._buf), None
            self._buf.clear()
            return OversizedLine(size, self._limit)
        line = bytes(self._buf.rstrip(b"\r"))
        self._buf.clear()
        if len(line) > self._limit:
            return OversizedLine(len(line), self._limit)
        if line.strip():
            return line
        raise StopAsyncIteration


def _content_length(buf: bytes | bytearray, newline: int) -> int:
    """Length of the line ending at ``newline``, minus a tolerated ``\\r``."""
    if newline > 0 and buf[newline - 1] == 0x0D:
        return newline - 1
    return newline


def encode_line(*parts: bytes) -> bytes:
    """Frame one serialized message: the concatenated ``parts`` plus ``\\n``.

    Raises ``ValueError`` if the message holds a raw newline, which would split it in
    two on the wire (JSON encoders escape newlines, so this means a bug upstream).
    """
    line = b"".join((*parts, b"\n"))
    if line.find(b"\n") != len(line) - 1:
        raise ValueError("a JSON-RPC message must not contain a raw newline")
    return line
