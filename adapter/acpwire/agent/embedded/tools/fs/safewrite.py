"""Writes that land where the approval said, even if links change while it was open.

Before asking, :func:`pin` records where a path resolves to and which file is there (its
device and inode, its link count). After the approval, :func:`write_pinned` walks the
resolved path from ``/`` one directory at a time with ``O_NOFOLLOW`` (a symlink planted in
any parent fails the walk), creates a new file with ``O_CREAT | O_EXCL | O_NOFOLLOW`` (a
link planted at its name fails) and opens an existing one only if it is still the same
inode with no new hard link. :func:`check_pinned` refuses a path that resolves elsewhere
now, before a write is handed to the editor.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import PurePosixPath

__all__ = ["MovedError", "Pin", "check_pinned", "pin", "remove_pinned", "write_pinned"]

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class MovedError(OSError):
    """The path no longer leads to the file that was approved."""


@dataclass(frozen=True, slots=True)
class Pin:
    """Where a path resolved to when its edit was asked, and what file was there."""

    path: str
    resolved: str
    identity: tuple[int, int] | None
    """(st_dev, st_ino) of the existing file; None for a file that did not exist."""
    links: int = 0


def pin(path: str) -> Pin:
    """Record ``path``'s resolved target (every symlink followed) and its file."""
    resolved = os.path.realpath(path)
    try:
        info = os.lstat(resolved)
    except OSError:
        return Pin(path, resolved, None)
    return Pin(path, resolved, (info.st_dev, info.st_ino), info.st_nlink)


def check_pinned(target: Pin) -> None:
    """Raise :class:`MovedError` when ``target.path`` resolves elsewhere than it did."""
    now = os.path.realpath(target.path)
    if now != target.resolved:
        raise MovedError(
            f"{target.path} now leads to {now}, not to the approved {target.resolved} "
            "(a link changed while the edit waited for approval)"
        )


def _open_parent(resolved: str) -> tuple[int, str]:
    """A descriptor of the resolved path's directory (created as needed, no link
    followed at any depth) and the file name."""
    parts = PurePosixPath(resolved).parts
    fd = os.open("/", _DIR_FLAGS | _CLOEXEC)
    try:
        for part in parts[1:-1]:
            try:
                child = os.open(part, _DIR_FLAGS | _CLOEXEC, dir_fd=fd)
            except FileNotFoundError:
                os.mkdir(part, 0o777, dir_fd=fd)
                child = os.open(part, _DIR_FLAGS | _CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = child
    except OSError as exc:
        os.close(fd)
        raise MovedError(f"cannot reach {resolved} without following a link: {exc}") from exc
    return fd, parts[-1]


def _same_file(target: Pin, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) != target.identity:
        raise MovedError(f"{target.resolved} is no longer the file that was approved")
    if info.st_nlink > target.links:
        raise MovedError(f"{target.resolved} got another hard link while the edit waited")


def write_pinned(target: Pin, data: bytes) -> None:
    """Write ``data`` to the approved file, never through a link (see the module doc)."""
    if not _NOFOLLOW or os.open not in os.supports_dir_fd:  # no such calls here
        check_pinned(target)
        with open(target.resolved, "wb") as handle:
            handle.write(data)
        return
    check_pinned(target)
    parent, name = _open_parent(target.resolved)
    try:
        if target.identity is None:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
            try:
                fd = os.open(name, flags, 0o666, dir_fd=parent)
            except FileExistsError as exc:
                raise MovedError(
                    f"{target.resolved} appeared while the edit waited for approval"
                ) from exc
        else:
            # O_NONBLOCK: a FIFO planted meanwhile fails the open instead of blocking it.
            flags = os.O_WRONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0)
            fd = os.open(name, flags, dir_fd=parent)
            try:
                _same_file(target, os.fstat(fd))
                os.ftruncate(fd, 0)
            except BaseException:
                os.close(fd)
                raise
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    finally:
        os.close(parent)


def remove_pinned(target: Pin) -> None:
    """Delete the approved file (the name itself, never what a link points to)."""
    check_pinned(target)
    if target.identity is None:
        raise FileNotFoundError(f"{target.resolved} does not exist")
    parent, name = _open_parent(target.resolved)
    try:
        _same_file(target, os.stat(name, dir_fd=parent, follow_symlinks=False))
        os.unlink(name, dir_fd=parent)
    finally:
        os.close(parent)
