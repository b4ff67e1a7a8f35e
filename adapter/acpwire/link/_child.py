"""A child process's stderr to a logger, and its orderly end (for ``link.spawn_agent``).

Stderr is read from the start and for as long as the child writes: a child whose stderr
pipe fills up while nobody reads blocks on its next write, protocol and all. Ending a
child: its stdin is closed first (an ACP agent exits at end of input), then it gets
``grace_s`` to exit, then SIGTERM, another ``grace_s``, then SIGKILL; it is always reaped.
When its stdout ends first, :func:`describe_exit` says why, for the requests it left
unanswered: its exit code and the last line of its stderr (:class:`StderrTail`).
"""

from __future__ import annotations

import contextlib
import logging
from collections import deque

import anyio
from anyio.abc import ByteReceiveStream, Process

from acpwire.rpc.errors import mask_secrets

__all__ = ["MAX_LINE_BYTES", "StderrTail", "describe_exit", "log_stderr", "reap"]

MAX_LINE_BYTES = 64 * 1024
"""A longer stderr line is logged in pieces of this size."""


class StderrTail:
    """The last lines a child wrote on stderr, and whether its stderr has ended."""

    def __init__(self, keep: int = 5) -> None:
        self.lines: deque[str] = deque(maxlen=keep)
        self.ended = anyio.Event()

    def last(self) -> str | None:
        """The last line that says something, if any."""
        return next((line for line in reversed(self.lines) if line.strip()), None)


async def log_stderr(
    stream: ByteReceiveStream, logger: logging.Logger, label: str, tail: StderrTail | None = None
) -> None:
    """Log each line of ``stream`` at INFO as ``label: line`` until it ends (kept in
    ``tail`` too, if given)."""
    pending = bytearray()

    def emit(line: bytes) -> None:
        text = line.decode("utf-8", "replace").rstrip("\r")
        logger.info("%s: %s", label, text)
        if tail is not None:
            tail.lines.append(text)

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
    finally:
        if pending:
            emit(bytes(pending))
        if tail is not None:
            tail.ended.set()


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


_EXIT_WAIT_S = 1.0
"""How long the end of a child's output waits for it to exit and finish its stderr."""
_MAX_SAID = 300


async def describe_exit(process: Process, tail: StderrTail) -> str:
    """Why a child's stdout ended, for the requests it left unanswered: its exit code (or
    that it still runs) and the last line it wrote on stderr."""
    with anyio.move_on_after(_EXIT_WAIT_S):
        await process.wait()
        await tail.ended.wait()
    code = process.returncode
    if code is None:
        said = "Connection closed: the agent closed its stdout and is still running"
    elif code < 0:
        said = f"Connection closed: the agent was killed by signal {-code}"
    else:
        said = f"Connection closed: the agent exited with code {code}"
    last = tail.last()
    if last is not None:
        words = mask_secrets(" ".join(last.split()))
        if len(words) > _MAX_SAID:
            words = words[: _MAX_SAID - 3] + "..."
        said += f"; its last line on stderr: {words}"
    return said
