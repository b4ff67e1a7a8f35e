"""The config home stays private: the directory 0700, its secrets and history 0600.

``config.toml`` may hold ``api_key``, ``.env`` holds keys, ``sessions.db`` (and its
``-wal``/``-shm``) every session's history. acpwire creates them with these modes whatever
the umask, and at start repairs any that are broader, with a warning on stderr. Files
belonging to someone else are reported, never touched. Stdlib only.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from pathlib import Path

__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "PRIVATE_FILES",
    "create_private_file",
    "make_private_home",
    "repair_home",
    "restrict",
    "write_private",
]

logger = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600
PRIVATE_FILES = (
    "config.toml",
    ".env",
    "sessions.db",
    "sessions.db-wal",
    "sessions.db-shm",
    "sessions.db-journal",
)


def restrict(path: Path, mode: int, *, warn: bool = True) -> None:
    """Take group and other permissions off ``path`` when it has any (links not followed)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        logger.warning("cannot check the permissions of %s: %s", path, exc)
        return
    if stat.S_ISLNK(info.st_mode) or not info.st_mode & 0o077:
        return
    current = stat.S_IMODE(info.st_mode)
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        logger.warning(
            "%s is readable by others (mode %o) and belongs to another user: not changed",
            path,
            current,
        )
        return
    try:
        os.chmod(path, mode)
    except OSError as exc:
        logger.warning("%s is readable by others (mode %o); cannot fix: %s", path, current, exc)
        return
    if warn:
        logger.warning(
            "%s was readable by others (mode %o); set to %o (it may hold keys or session history)",
            path,
            current,
            mode,
        )


def make_private_home(home: Path) -> None:
    """Create the config home (mode 0700) if needed; tighten it if broader."""
    if not home.exists():
        home.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            home.mkdir(mode=DIR_MODE)
        restrict(home, DIR_MODE, warn=False)
        return
    restrict(home, DIR_MODE)


def repair_home(home: Path) -> None:
    """At start: the home and its private files back to 0700/0600, with a warning."""
    if not home.is_dir():
        return
    restrict(home, DIR_MODE)
    for name in PRIVATE_FILES:
        restrict(home / name, FILE_MODE)


def create_private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 when it does not exist (SQLite then keeps the
    mode for the database and gives it to the -wal and -shm files it makes)."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    restrict(path, FILE_MODE, warn=False)


def write_private(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically; the file is 0600 from its first byte."""
    tmp = path.with_name(f".{path.name}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)
