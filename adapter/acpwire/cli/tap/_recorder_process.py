"""The tap's recorder in a process of its own, so that parsing, checking and writing the
trace never hold the forwarding threads back.

In one process the recorder's thread and the forwarding threads share the interpreter
lock: a forwarding thread woken by input waits until the recorder (validating a large
message with pydantic, say) lets it run. Here the tap hands each chunk, stamped with its
direction and the time it was read, to a child process through a pipe (one ``os.write``,
under a lock so that the two directions' frames never interleave); the child
(the same interpreter, calling :func:`main`) runs :class:`~._trace.Recorder`, the
checks included, and writes the trace. The frame goes into the pipe before the chunk is
written on, so a request is always recorded before its answer.

The child runs in a process group of its own and ignores SIGINT (a Ctrl-C to the editor's
group is the agent's business); it ends when the pipe closes, so a trace is complete up
to the moment the tap ended, however it ended. When the child is gone (it failed), the
tap says so once and goes on forwarding without a trace. A full pipe (a recorder that
falls behind a flood) slows the forwarding rather than losing records.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Final

from acpwire.cli.tap._trace import AGENT_TO_CLIENT, CLIENT_TO_AGENT, Direction

__all__ = ["RecorderProcess", "main"]

_FRAME: Final = struct.Struct("<Bdi")
"""direction (0 client->agent, 1 agent->client), monotonic time read, length (-1: end)."""
_CODES: Final[dict[Direction, int]] = {CLIENT_TO_AGENT: 0, AGENT_TO_CLIENT: 1}
_DIRECTIONS: Final[tuple[Direction, Direction]] = (CLIENT_TO_AGENT, AGENT_TO_CLIENT)
_PIPE_BYTES: Final = 1 << 20
"""The pipe's capacity asked of Linux (F_SETPIPE_SZ), so a burst never waits on the child."""
_F_SETPIPE_SZ: Final = 1031
_POLL_S: Final = 0.005
"""How long the child sleeps before it reads what has come (the trace lags that much)."""
_CHILD: Final = f"import sys; from {__name__} import main; sys.exit(main(sys.argv[1:]))"
"""The child's program (``-c``: ``-m`` would import this module twice, as the package's
and as ``__main__``)."""
_CLOSE_S: Final = 30.0
"""How long the tap waits at its end for the child to write what it was sent."""


class RecorderProcess:
    """The tap's side: starts the child with the trace file ``fd`` (closed here once the
    child has it) and sends it every chunk read."""

    def __init__(self, fd: int, *, start: float, mask: bool, check: bool, report: bool) -> None:
        argv = [sys.executable, "-c", _CHILD, "--fd", str(fd), "--start", repr(start)]
        argv += [flag for flag, on in (("--no-mask", not mask), ("--no-check", not check)) if on]
        argv += [] if report else ["--quiet"]
        try:
            self._child: subprocess.Popen[bytes] | None = subprocess.Popen(
                argv, stdin=subprocess.PIPE, pass_fds=(fd,), process_group=0, bufsize=0
            )
        finally:
            os.close(fd)
        assert self._child.stdin is not None
        self._pipe = self._child.stdin
        with contextlib.suppress(OSError):
            fcntl.fcntl(self._pipe.fileno(), _F_SETPIPE_SZ, _PIPE_BYTES)
        self._lock = threading.Lock()

    def chunk(self, direction: Direction, data: bytes, t: float) -> None:
        """Bytes read in ``direction`` at ``t`` (before they are written on)."""
        self._send(_FRAME.pack(_CODES[direction], t, len(data)) + data)

    def end(self, direction: Direction, t: float) -> None:
        """End of input in ``direction``."""
        self._send(_FRAME.pack(_CODES[direction], t, -1))

    def _send(self, frame: bytes) -> None:
        with self._lock:
            if self._child is None:
                return
            try:
                view = memoryview(frame)
                fileno = self._pipe.fileno()
                while view:
                    view = view[os.write(fileno, view) :]
            except OSError as exc:
                self._child = None
                print(
                    f"acpwire tap: the trace recorder stopped ({exc.strerror or exc});"
                    " forwarding goes on without a trace",
                    file=sys.stderr,
                )

    def close(self) -> None:
        """No more chunks: let the child write the rest and the summary, and wait."""
        with self._lock:
            child, self._child = self._child, None
            with contextlib.suppress(OSError):
                self._pipe.close()
        if child is None:
            return
        try:
            child.wait(_CLOSE_S)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            print("acpwire tap: the trace recorder did not finish; the trace may end early",
                  file=sys.stderr)  # fmt: skip


class _Frames:
    """Frames read from the pipe in batches: the child sleeps between reads, so the tap's
    writes do not wake it once per message (each wake-up costs the forwarding a context
    switch on a busy machine)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = bytearray()
        self._closed = False

    def __iter__(self) -> Iterator[tuple[Direction, float, bytes | None]]:
        while True:
            while len(self._buffer) >= _FRAME.size:
                code, t, size = _FRAME.unpack_from(self._buffer)
                end = _FRAME.size + max(size, 0)
                if len(self._buffer) < end:
                    break
                data = None if size < 0 else bytes(self._buffer[_FRAME.size : end])
                del self._buffer[:end]
                yield _DIRECTIONS[code], t, data
            if self._closed:
                return  # a frame cut short by the tap's end is dropped
            time.sleep(_POLL_S)
            part = os.read(self._fd, _PIPE_BYTES)
            if not part:
                self._closed = True
            self._buffer += part


def main(argv: list[str] | None = None) -> int:
    """The child: read frames from stdin, record them, write the summary at the end."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parser = argparse.ArgumentParser(prog="acpwire tap recorder")
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--start", type=float, required=True)
    parser.add_argument("--no-mask", action="store_true")
    parser.add_argument("--no-check", action="store_true")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    from acpwire.cli.tap._check import LiveChecker
    from acpwire.cli.tap._trace import Recorder

    recorder = Recorder(
        args.fd,
        start=args.start,
        mask=not args.no_mask,
        inspectors=() if args.no_check else (LiveChecker(),),
        report=not args.quiet,
    )
    try:
        for direction, t, data in _Frames(sys.stdin.fileno()):
            if data is None:
                recorder.end(direction, t)
            else:
                recorder.chunk(direction, data, t)
    finally:
        recorder.close()
    return 0
