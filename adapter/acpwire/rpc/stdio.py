"""The process's stdin and stdout claimed for the protocol, before any event loop runs.

:func:`claim_stdio` takes private duplicates of fds 0 and 1 and, with ``isolate``,
points fd 1 at stderr and fd 0 at the null device, so a stray ``print`` or a child
process can neither corrupt nor steal the protocol. The claim is a plain object: code
that runs before the event loop (the ``acpwire`` command's early ``initialize`` answer)
reads and writes through it, records what it read but did not use, and hands it to
:func:`acpwire.rpc.stdio_streams`, which serves the rest. Stdlib only.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["ClaimedStdio", "claim_stdio", "write_all"]


@dataclass(slots=True)
class ClaimedStdio:
    """Private duplicates of stdin and stdout, and what was read from stdin already."""

    in_fd: int
    out_fd: int
    restore: Callable[[], None] | None
    """Undoes the isolation (None: fds 0 and 1 were left alone)."""
    unread: bytes = b""
    """Bytes taken from ``in_fd`` that the connection must still read, in order."""
    at_eof: bool = False
    """``in_fd`` already reported end of input (a terminal reports it once)."""

    def read_some(self, size: int) -> bytes:
        """One blocking read of ``in_fd``, kept in :attr:`unread`; ``b""`` at end of input."""
        chunk = os.read(self.in_fd, size)
        if chunk:
            self.unread += chunk
        else:
            self.at_eof = True
        return chunk

    def write_all(self, data: bytes) -> None:
        """Write all of ``data`` to ``out_fd`` (blocking); raises ``OSError``."""
        write_all(self.out_fd, data)


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd``, however many writes it takes (blocking)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def claim_stdio(*, isolate: bool = True) -> ClaimedStdio:
    """Duplicate fds 0 and 1 for the protocol; with ``isolate``, point fd 1 at stderr
    and fd 0 at the null device until ``restore`` is called."""
    in_fd, out_fd = os.dup(0), os.dup(1)
    return ClaimedStdio(in_fd, out_fd, _isolate_stdio() if isolate else None)


def _isolate_stdio() -> Callable[[], None]:
    saved_in, saved_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    if sys.stdout is not None:
        sys.stdout.flush()  # anything printed earlier now lands on stderr too

    def restore() -> None:
        if sys.stdout is not None:
            sys.stdout.flush()  # stray prints made while serving belong on stderr
        os.dup2(saved_out, 1)
        os.dup2(saved_in, 0)
        os.close(saved_out)
        os.close(saved_in)

    return restore
