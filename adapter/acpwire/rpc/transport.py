"""Byte transports: the process's real stdio, and connected in-memory pairs for tests.

Both give a ``(ByteReceiveStream, ByteSendStream)`` pair, so a connection never knows
which one it runs on.

Stdio uses one daemon thread per direction doing plain blocking ``os.read``/``os.write``
on private duplicates of fds 0 and 1. Nothing is switched to non-blocking mode (that
broke stdout for other writers in the official SDK, EAGAIN under load), every write is
complete however slow the reader, and a thread blocked on a quiet stdin never keeps the
process alive at exit. While serving, fd 1 is pointed at stderr and fd 0 at the null
device, so a stray ``print`` or a child process cannot corrupt or steal the protocol.

This module knows nothing about JSON-RPC or ACP; it imports only the stdlib and anyio.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Final, TypeAlias

import anyio
import anyio.from_thread
from anyio.abc import ByteReceiveStream, ByteSendStream
from anyio.lowlevel import EventLoopToken, current_token
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .stdio import ClaimedStdio, claim_stdio, write_all

logger = logging.getLogger(__name__)

_READ_CHUNK: Final = 64 * 1024
_READ_AHEAD_CHUNKS: Final = 16
_WRITE_HIGH_WATER: Final = 1024 * 1024

StreamPair: TypeAlias = tuple[ByteReceiveStream, ByteSendStream]


class _FdReceiveStream(ByteReceiveStream):
    """Reads a file descriptor in a daemon thread that owns (and finally closes) it."""

    def __init__(
        self, fd: int, token: EventLoopToken, unread: bytes = b"", at_eof: bool = False
    ) -> None:
        self._items_in, self._items = anyio.create_memory_object_stream[bytes | OSError](
            _READ_AHEAD_CHUNKS
        )
        self._rest = unread
        """Bytes to hand out before reading more (at first: what was read before the loop)."""
        self._eof = False
        if at_eof:  # the end was seen already; a terminal would not report it again
            os.close(fd)
            self._items_in.close()
            return
        thread = threading.Thread(
            target=self._run, args=(fd, token), name=f"acpwire-read-fd{fd}", daemon=True
        )
        thread.start()

    def _run(self, fd: int, token: EventLoopToken) -> None:
        try:
            while True:
                item: bytes | OSError
                try:
                    item = os.read(fd, _READ_CHUNK)
                except OSError as exc:
                    item = exc
                anyio.from_thread.run(self._items_in.send, item, token=token)
                if not isinstance(item, bytes) or not item:
                    return
        except BaseException as exc:  # the loop ended or the stream closed
            logger.debug("stdin reader stopped: %r", exc)
        finally:
            os.close(fd)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._rest:
            if self._eof:
                raise anyio.EndOfStream
            try:
                item = await self._items.receive()
            except anyio.EndOfStream:  # closed at start: end of input was read before
                item = b""
            if isinstance(item, OSError):
                self._eof = True
                raise anyio.BrokenResourceError(f"reading stdin failed: {item}") from item
            if not item:
                self._eof = True
                raise anyio.EndOfStream
            self._rest = item
        chunk, self._rest = self._rest[:max_bytes], self._rest[max_bytes:]
        return chunk

    async def aclose(self) -> None:
        self._items.close()
        self._items_in.close()  # a reader thread still sending gets ClosedResourceError


class _FdSendStream(ByteSendStream):
    """Writes to a file descriptor from a daemon thread that owns (and finally closes) it.

    ``send`` queues bytes (waiting while more than a high-water mark is queued) and the
    thread writes everything queued in one go; ``aclose`` returns once all is written.
    """

    def __init__(self, fd: int, token: EventLoopToken) -> None:
        self._chunks: list[bytes] = []
        self._queued = 0
        self._in_flight = False
        """A batch was handed to the thread and is not known to be written yet."""
        self._sent = 0
        """Bytes accepted by :meth:`send` since the start."""
        self._written = 0
        """Bytes the thread has written since the start."""
        self._batch = 0
        self._progress = anyio.Event()
        """Set (and replaced) whenever ``_written`` grows or writing ends."""
        self._data_ready = anyio.Event()
        self._space = anyio.Event()
        self._closing = False
        self._error: OSError | None = None
        self._finished = anyio.Event()
        self._token = token
        thread = threading.Thread(
            target=self._run, args=(fd,), name=f"acpwire-write-fd{fd}", daemon=True
        )
        thread.start()

    async def send(self, item: bytes) -> None:
        while True:
            if self._error is not None:
                raise anyio.BrokenResourceError(f"writing stdout failed: {self._error}")
            if self._closing:
                raise anyio.ClosedResourceError
            if self._queued < _WRITE_HIGH_WATER:
                break
            self._space = anyio.Event()
            await self._space.wait()
        self._chunks.append(item)
        self._queued += len(item)
        self._sent += len(item)
        self._data_ready.set()

    async def aclose(self) -> None:
        self._closing = True
        self._data_ready.set()
        await self._finished.wait()

    async def drained(self) -> None:
        """Wait until everything sent before this call is written (or writing failed).

        Output sent meanwhile does not prolong the wait, so a busy stream (another
        session streaming a reply) cannot hold it off.
        """
        mark = self._sent
        while self._written < mark and self._error is None and not self._finished.is_set():
            await self._progress.wait()

    def _wake(self) -> None:
        self._progress.set()
        self._progress = anyio.Event()

    async def _next_batch(self) -> bytes | None:
        """Runs on the event loop on behalf of the writer thread, which asks for the
        next batch only once the previous one is written."""
        if self._in_flight:
            self._in_flight = False
            self._written += self._batch
            self._wake()
        while not self._chunks:
            if self._closing:
                return None
            self._data_ready = anyio.Event()
            await self._data_ready.wait()
        batch = b"".join(self._chunks)
        self._chunks.clear()
        self._queued = 0
        self._batch = len(batch)
        self._in_flight = True
        self._space.set()
        return batch

    def _on_loop(self, func: Callable[[], object]) -> None:
        try:
            anyio.from_thread.run_sync(func, token=self._token)
        except BaseException as exc:  # the event loop is already gone
            logger.debug("stdout writer could not report back: %r", exc)

    def _fail(self, exc: OSError) -> None:
        self._error = exc
        self._space.set()
        self._wake()

    def _end(self) -> None:
        self._finished.set()
        self._wake()

    def _run(self, fd: int) -> None:
        try:
            while (batch := anyio.from_thread.run(self._next_batch, token=self._token)) is not None:
                write_all(fd, batch)
        except OSError as exc:
            logger.warning("writing stdout failed: %s", exc)
            self._on_loop(functools.partial(self._fail, exc))
        except BaseException as exc:  # the loop ended under us
            logger.debug("stdout writer stopped: %r", exc)
        finally:
            os.close(fd)
            self._on_loop(self._end)


@asynccontextmanager
async def stdio_streams(
    *, isolate: bool = True, flush_timeout: float = 10.0, claimed: ClaimedStdio | None = None
) -> AsyncIterator[StreamPair]:
    """The process's stdin/stdout as a byte stream pair (binary, unbuffered).

    With ``isolate`` (the default) fd 1 points at stderr and fd 0 at the null device
    until the context exits, so only protocol bytes reach the real stdout and no child
    process can read protocol input. On exit, queued output is flushed first (waiting
    at most ``flush_timeout`` seconds for a reader that has stopped reading).
    ``claimed``: stdio claimed before the event loop (:func:`acpwire.rpc.stdio.claim_stdio`;
    ``isolate`` is then the claim's); what it read and did not use is received first.
    """
    if claimed is None:
        claimed = claim_stdio(isolate=isolate)
    restore = claimed.restore
    token = current_token()
    receive = _FdReceiveStream(claimed.in_fd, token, claimed.unread, claimed.at_eof)
    send = _FdSendStream(claimed.out_fd, token)
    try:
        yield receive, send
    finally:
        with anyio.move_on_after(flush_timeout, shield=True) as flush:
            await send.aclose()
        if flush.cancelled_caught:
            logger.warning(
                "stdout did not drain within %s s; unwritten output dropped", flush_timeout
            )
        with anyio.CancelScope(shield=True):
            await receive.aclose()
        if restore is not None:
            restore()


class MemoryByteReceiveStream(ByteReceiveStream):
    """Receiving end of an in-memory byte pipe (chunks of any size, ``max_bytes`` honoured)."""

    def __init__(self, items: MemoryObjectReceiveStream[bytes]) -> None:
        self._items = items
        self._buf = b""
        self._pos = 0

    async def receive(self, max_bytes: int = 65536) -> bytes:
        while self._pos >= len(self._buf):
            self._buf = await self._items.receive()
            self._pos = 0
        start, self._pos = self._pos, min(self._pos + max_bytes, len(self._buf))
        return self._buf[start : self._pos]

    async def aclose(self) -> None:
        self._items.close()


class MemoryByteSendStream(ByteSendStream):
    """Sending end of an in-memory byte pipe; closing it is end-of-stream for the reader."""

    def __init__(self, items: MemoryObjectSendStream[bytes]) -> None:
        self._items = items

    async def send(self, item: bytes) -> None:
        await self._items.send(bytes(item))

    async def aclose(self) -> None:
        self._items.close()


MemoryEndpoint: TypeAlias = tuple[MemoryByteReceiveStream, MemoryByteSendStream]


def memory_pair(max_buffer_chunks: float = 256) -> tuple[MemoryEndpoint, MemoryEndpoint]:
    """Two connected duplex endpoints: what one sends, the other receives."""
    a_to_b_send, a_to_b_receive = anyio.create_memory_object_stream[bytes](max_buffer_chunks)
    b_to_a_send, b_to_a_receive = anyio.create_memory_object_stream[bytes](max_buffer_chunks)
    a = (MemoryByteReceiveStream(b_to_a_receive), MemoryByteSendStream(a_to_b_send))
    b = (MemoryByteReceiveStream(a_to_b_receive), MemoryByteSendStream(b_to_a_send))
    return a, b
