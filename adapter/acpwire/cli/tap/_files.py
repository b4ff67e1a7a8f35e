"""Where a tap's trace goes and how it is created: private from its first byte.

``--trace FILE`` names the file; by default each run gets its own file in the config
home's ``traces/`` folder (``tap-<UTC time>-<pid>.jsonl``), and the oldest runs there are
deleted at start so that at most :data:`KEEP_RUNS` runs and :data:`KEEP_BYTES` remain.
The folder is made 0700 and each file 0600 with ``O_EXCL`` (a trace holds prompts and
code). Stdlib only.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from pathlib import Path
from typing import Final

from acpwire.config.home import config_home

__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "KEEP_BYTES",
    "KEEP_RUNS",
    "TraceFileError",
    "create_trace",
    "default_trace",
    "prune",
    "traces_dir",
]

DIR_MODE: Final = 0o700
FILE_MODE: Final = 0o600
KEEP_RUNS: Final = 20
"""Runs kept in the default folder, this one included."""
KEEP_BYTES: Final = 50 * 1024 * 1024
"""Bytes of earlier runs kept in the default folder (the newest first)."""
_PREFIX, _SUFFIX = "tap-", ".jsonl"


class TraceFileError(Exception):
    """The trace file cannot be created (the message says why)."""


def traces_dir(home: Path | None = None) -> Path:
    return (config_home() if home is None else home) / "traces"


def _private_dir(path: Path) -> None:
    for folder in (path.parent, path):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=DIR_MODE)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise TraceFileError(f"{path} is not a folder")
    if stat.S_IMODE(info.st_mode) & 0o077 and info.st_uid == os.geteuid():
        os.chmod(path, DIR_MODE)


def _runs(folder: Path) -> list[tuple[float, str, int]]:
    """The earlier runs' files, newest first: (mtime, name, size)."""
    runs = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if not (entry.name.startswith(_PREFIX) and entry.name.endswith(_SUFFIX)):
                continue
            with contextlib.suppress(OSError):
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode):
                    runs.append((info.st_mtime, entry.name, info.st_size))
    return sorted(runs, reverse=True)


def prune(folder: Path, *, keep_runs: int = KEEP_RUNS, keep_bytes: int = KEEP_BYTES) -> list[str]:
    """Delete the oldest runs so that, with the one about to start, at most ``keep_runs``
    remain and the earlier ones kept hold at most ``keep_bytes``; the names deleted."""
    kept = total = 0
    deleted = []
    for _, name, size in _runs(folder):
        if kept < keep_runs - 1 and total + size <= keep_bytes:
            kept += 1
            total += size
            continue
        with contextlib.suppress(FileNotFoundError):
            (folder / name).unlink()
            deleted.append(name)
    return deleted


def _create(path: Path) -> int:
    return os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, FILE_MODE)


def default_trace(home: Path | None = None) -> tuple[Path, int]:
    """A new file for this run in the default folder (pruned first), and its descriptor."""
    folder = traces_dir(home)
    try:
        _private_dir(folder)
        prune(folder)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        for attempt in range(100):
            extra = f"-{attempt}" if attempt else ""
            path = folder / f"{_PREFIX}{stamp}-{os.getpid()}{extra}{_SUFFIX}"
            with contextlib.suppress(FileExistsError):
                return path, _create(path)
    except OSError as exc:
        raise TraceFileError(f"cannot create a trace in {folder}: {exc}") from exc
    raise TraceFileError(f"cannot create a trace in {folder}: every name is taken")


def create_trace(path: Path) -> int:
    """``path`` created 0600 for writing, replacing a regular file already there (never
    following a link); its descriptor."""
    try:
        with contextlib.suppress(FileNotFoundError):
            if not stat.S_ISREG(os.lstat(path).st_mode):
                raise TraceFileError(f"{path} exists and is not a regular file")
            path.unlink()
        return _create(path)
    except OSError as exc:
        raise TraceFileError(f"cannot create the trace {path}: {exc}") from exc
