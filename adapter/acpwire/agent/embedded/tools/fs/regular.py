"""Reading a file only when it is a regular file of bounded size.

A device (``/dev/zero``), a FIFO, a socket, or a symlink to one of them is refused before
anything is read, so neither an endless read nor an open that never returns can wedge a
tool. The file is stat'ed first, opened without blocking, and the opened descriptor must
be that same regular file (a swap between the two is refused, nothing read). Stdlib only:
the search worker process uses it too.
"""

from __future__ import annotations

import os
import stat

from acpwire.agent.embedded.tools.args import ToolArgError

__all__ = ["FileRefused", "FileTooLarge", "check_regular", "read_regular", "too_large"]

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
_CHUNK = 1 << 20


class FileRefused(ToolArgError):
    """The path is not a regular file, or it is over the size cap: nothing was read."""


class FileTooLarge(FileRefused):
    """The file is over ``[tools] max_file_bytes``."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_regular(path: str) -> os.stat_result | None:
    """The stat of ``path`` (links followed) when it is a regular file; None when nothing
    is there; raises :class:`FileRefused` for anything else."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None
    except OSError as exc:
        raise ToolArgError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(info.st_mode):
        if stat.S_ISDIR(info.st_mode):
            raise FileRefused(f"{path} is a directory, not a file")
        raise FileRefused(f"{path} is {_kind(info.st_mode)}, not a regular file: not read")
    return info


def too_large(path: str, size: int, cap: int) -> FileTooLarge:
    return FileTooLarge(
        f"{path} is {size} bytes, over the cap of {cap} bytes ([tools] max_file_bytes): not "
        "read. Search it with search_files, or look at a part with a shell command"
    )


def read_regular(path: str, max_bytes: int) -> bytes | None:
    """The bytes of the regular file ``path`` (None when it does not exist)."""
    info = check_regular(path)
    if info is None:
        return None
    if info.st_size > max_bytes:
        raise too_large(path, info.st_size, max_bytes)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ToolArgError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (
            info.st_dev,
            info.st_ino,
        ):
            raise FileRefused(f"{path} was replaced while it was opened: not read")
        chunks: list[bytes] = []
        total = 0
        while total <= max_bytes:
            chunk = os.read(fd, min(_CHUNK, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:
            raise too_large(path, total, max_bytes)
        return b"".join(chunks)
    except OSError as exc:
        raise ToolArgError(f"cannot read {path}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
