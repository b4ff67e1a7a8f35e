"""The in-memory byte pipe pair used by the connection tests, and the stdout writer's
drain."""

import os
import threading

import anyio
import pytest
from anyio.lowlevel import current_token

from acpwire.rpc import memory_pair
from acpwire.rpc.transport import _FdSendStream

pytestmark = pytest.mark.anyio


async def test_pair_is_cross_connected_and_honours_max_bytes() -> None:
    (a_recv, a_send), (b_recv, b_send) = memory_pair()
    with anyio.fail_after(5):
        await a_send.send(b"hello world")
        assert await b_recv.receive(5) == b"hello"
        assert await b_recv.receive(100) == b" world"
        await b_send.send(b"")  # empty chunks are skipped, never returned
        await b_send.send(b"back")
        assert await a_recv.receive() == b"back"
    for stream in (a_recv, a_send, b_recv, b_send):
        await stream.aclose()


async def test_closing_the_sender_is_end_of_stream_after_the_data() -> None:
    (a_recv, a_send), (b_recv, b_send) = memory_pair()
    with anyio.fail_after(5):
        await a_send.send(b"last")
        await a_send.aclose()
        assert await b_recv.receive() == b"last"
        with pytest.raises(anyio.EndOfStream):
            await b_recv.receive()
    for stream in (a_recv, b_recv, b_send):
        await stream.aclose()


async def test_closing_the_receiver_breaks_the_sender() -> None:
    (a_recv, a_send), (b_recv, b_send) = memory_pair()
    await b_recv.aclose()
    with pytest.raises(anyio.BrokenResourceError):
        await a_send.send(b"nobody listens")
    for stream in (a_recv, a_send, b_send):
        await stream.aclose()


async def test_bounded_buffer_applies_backpressure() -> None:
    (a_recv, a_send), (b_recv, b_send) = memory_pair(max_buffer_chunks=2)
    sent: list[int] = []

    async def producer() -> None:
        for i in range(5):
            await a_send.send(b"%d" % i)
            sent.append(i)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(producer)
            await anyio.wait_all_tasks_blocked()
            assert sent == [0, 1]  # the third chunk waits for the reader
            received = [await b_recv.receive() for _ in range(5)]
    assert received == [b"0", b"1", b"2", b"3", b"4"]
    for stream in (a_recv, a_send, b_recv, b_send):
        await stream.aclose()


async def test_the_fd_writer_reports_when_queued_output_is_written() -> None:
    """``drained`` returns once every byte sent so far is in the pipe (and at once when
    nothing is queued)."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    stream = _FdSendStream(write_fd, current_token())
    try:
        with anyio.fail_after(5):
            await stream.drained()
            payload = b"".join(b"frame %d\n" % i for i in range(2000))
            for start in range(0, len(payload), 4096):
                await stream.send(payload[start : start + 4096])
            await stream.drained()
            received = b""
            while len(received) < len(payload):
                received += os.read(read_fd, 1 << 16)
            assert received == payload
            with pytest.raises(BlockingIOError):
                os.read(read_fd, 1)  # nothing more was written after drained returned
    finally:
        await stream.aclose()
        os.close(read_fd)


async def test_drained_is_not_held_off_by_output_sent_after_it_was_called() -> None:
    """A stream that never goes idle (a session streaming) still lets ``drained`` return
    once what was sent before the call is out."""
    read_fd, write_fd = os.pipe()
    stream = _FdSendStream(write_fd, current_token())
    received = bytearray()
    lock = threading.Lock()

    def reader() -> None:  # a thread: the pipe drains as fast as the writer fills it
        while chunk := os.read(read_fd, 1 << 16):
            with lock:
                received.extend(chunk)

    def seen(needle: bytes) -> bool:
        with lock:
            return needle in received

    quiet, chatter_done = anyio.Event(), anyio.Event()

    async def chatter() -> None:
        while not quiet.is_set():
            await stream.send(b"x" * 512 + b"\n")
            await anyio.sleep(0)
        chatter_done.set()

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(chatter)
            await anyio.sleep(0.05)
            await stream.send(b"MARK\n")
            with anyio.fail_after(20):
                await stream.drained()  # the chatter goes on meanwhile
            assert not chatter_done.is_set()
            deadline = anyio.current_time() + 5
            while not seen(b"MARK\n") and anyio.current_time() < deadline:
                await anyio.sleep(0.01)  # written to the pipe; the reader thread gets it
            assert seen(b"MARK\n")
            quiet.set()
    finally:
        await stream.aclose()  # closes the write end: the reader sees end of file
        thread.join(10)
        os.close(read_fd)
