"""A child process's stderr to a logger, and its orderly end (for ``link.spawn_agent``).

Stderr is read from the start and for as long as the child writes: a child whose stderr
pipe fills up while nobody reads blocks on its next write, protocol and all. Ending a
child: its stdin is closed first (an ACP agent exits at end of input), then it gets
``grace_s`` to exit, then SIGTERM, another ``grace_s``, then SIGKILL; it is always reaped.
"""

from __future__ import annotations

import contextlib
import logging

import anyio
from anyio.abc import ByteReceiveStream, Process

__all__ = ["MAX_LINE_BYTES", "log_stderr", "reap"]

MAX_LINE_BYTES = 64 * 1024
"""A longer stderr line is logged in pieces of this size."""


async def log_stderr(stream: ByteReceiveStream, logger: logging.Logger, label: str) -> None:
    """Log each line of ``stream`` at INFO as ``label: line`` until it ends."""
    pending = bytearray()

    def emit(line: bytes) -> None:
        logger.info("%s: %s", label, line.decode("utf-8", "replace").rstrip("\r"))

    try:
        async for chunk in stream:
            pending += chunk
            while (cut := pending.find(b"\n")) >= 0:
                emit(bytes(pending[:cut]))
                del pending[: cut + 1]
            while len(pending) >= MAX_LINE_BYTES:
                emit(bytes(pending[:MAX_LINE_BYTES]))
                del pending[:MAX_LINE_BYTES]
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    if pending:
        emit(bytes(pending))


async def reap(process: Process, grace_s: float) -> int:
    """Wait up to ``grace_s`` for ``process`` to exit, then terminate it, then kill it;
    returns its exit code. Call with the child's stdin already closed."""
    with anyio.move_on_after(grace_s):
        return await process.wait()
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        with anyio.move_on_after(grace_s):
            return await process.wait()
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    return await process.wait()
