"""NDJSON line splitting, the oversized-line path and message framing."""

from collections.abc import Iterable

import anyio
import pytest
from anyio.abc import ByteReceiveStream

from acpwire.rpc.framing import HEAD_BYTES, LineReader, OversizedLine, encode_line

pytestmark = pytest.mark.anyio


class ChunkStream(ByteReceiveStream):
    """Serves fixed chunks (cut further by max_bytes), then end of stream."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = list(chunks)
        self.max_buffered = 0
        self.reader: LineReader | None = None

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if self.reader is not None:
            self.max_buffered = max(self.max_buffered, self.reader.buffered)
        if not self._chunks:
            raise anyio.EndOfStream
        chunk = self._chunks.pop(0)
        if len(chunk) > max_bytes:
            self._chunks.insert(0, chunk[max_bytes:])
            chunk = chunk[:max_bytes]
        return chunk

    async def aclose(self) -> None:
        self._chunks.clear()


async def read_all(data: bytes | list[bytes], limit: int = 1024, **kw: int) -> list[object]:
    chunks = data if isinstance(data, list) else [data]
    with anyio.fail_after(5):
        return [item async for item in LineReader(ChunkStream(chunks), limit, **kw)]


async def test_lines_blank_lines_and_crlf() -> None:
    data = b'{"a":1}\n\n  \r\n{"b":2}\r\n\t\n{"c":3}\n'
    assert await read_all(data) == [b'{"a":1}', b'{"b":2}', b'{"c":3}']


async def test_lines_split_across_one_byte_chunks() -> None:
    data = b'{"a":1}\r\n{"b":"two"}\n'
    assert await read_all([bytes([b]) for b in data]) == [b'{"a":1}', b'{"b":"two"}']


async def test_final_line_without_newline_is_delivered() -> None:
    assert await read_all(b"one\ntwo") == [b"one", b"two"]
    assert await read_all(b"one\n   ") == [b"one"]


async def test_line_at_the_limit_passes_and_one_more_byte_is_oversized() -> None:
    exact, over = b"x" * 16, b"y" * 17
    assert await read_all(exact + b"\r\n" + over + b"\nok\n", limit=16) == [
        exact,
        OversizedLine(17, 16),
        b"ok",
    ]


async def test_oversized_line_is_skipped_and_reading_continues() -> None:
    big = b"z" * 5000
    for chunks in ([b"a\n" + big + b"\nb\n"], [bytes([c]) for c in b"a\n" + big + b"\nb\n"]):
        assert await read_all(chunks) == [b"a", OversizedLine(5000, 1024), b"b"]


async def test_oversized_line_is_never_buffered_whole() -> None:
    limit, chunk = 1024, 4096
    size = 10 * 1024 * 1024
    stream = ChunkStream([b"x" * size + b"\n{}\n"])
    reader = LineReader(stream, limit, chunk_bytes=chunk)
    stream.reader = reader
    with anyio.fail_after(5):
        items = [item async for item in reader]
    assert items == [OversizedLine(size, limit), b"{}"]
    assert stream.max_buffered <= limit + chunk


async def test_oversized_line_at_end_of_stream() -> None:
    assert await read_all(b"a\n" + b"q" * 3000) == [b"a", OversizedLine(3000, 1024)]
    assert await read_all([b"a\n", b"q" * 600, b"q" * 600]) == [b"a", OversizedLine(1200, 1024)]


async def test_empty_stream() -> None:
    assert await read_all([]) == []


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError):
        LineReader(ChunkStream([]), 0)


def test_oversized_line_description_names_size_and_limit() -> None:
    assert OversizedLine(5000, 1024).describe() == (
        "message of 5000 bytes exceeds the limit of 1024 bytes"
    )


def test_encode_line_appends_newline_and_rejects_raw_newlines() -> None:
    assert encode_line(b'{"a":', b"1}") == b'{"a":1}\n'
    with pytest.raises(ValueError, match="raw newline"):
        encode_line(b'{"a":"x\ny"}')


async def test_an_oversized_line_keeps_its_head() -> None:
    start = b'{"jsonrpc":"2.0","id":7,"method":"m","params":"'
    whole = start + b"q" * 3000 + b'"}'
    # Whole line in one chunk, and dropped while still arriving: the head is kept either way.
    for chunks in ([whole + b"\n"], [whole[:1500], whole[1500:] + b"\n"]):
        (item,) = await read_all(chunks)
        assert isinstance(item, OversizedLine)
        assert item.head == whole[:HEAD_BYTES]
        assert item.size == len(whole)
