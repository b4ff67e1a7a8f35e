"""Opening the session store with a recovery policy for damaged or unusable files.

The server calls :func:`open_session_store` once at start-up. A corrupt file must not stop the
backend: depending on the policy it is moved aside (kept for inspection, never deleted) and a
fresh store started, or the backend runs on an in-memory store. Either way one log line says
exactly what happened.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Literal

from acpwire.store.db import MEMORY
from acpwire.store.errors import StoreCorruptError, StoreError
from acpwire.store.session_store import SessionStore
from acpwire.store.values import utcnow

__all__ = ["DEFAULT_FILENAME", "RecoveryPolicy", "move_corrupt_aside", "open_session_store"]

logger = logging.getLogger(__name__)

DEFAULT_FILENAME = "sessions.db"
_SIDECARS = ("-wal", "-shm", "-journal")

RecoveryPolicy = Literal["raise", "move_aside", "memory"]
"""``raise``: propagate the error. ``move_aside``: rename a corrupt file to
``<name>.corrupt-<UTC time>`` and start an empty store (other errors propagate).
``memory``: on any store error, serve from an in-memory store."""


def move_corrupt_aside(path: Path) -> Path:
    """Rename ``path`` (and its WAL/SHM/journal files) to ``<name>.corrupt-<ts>``; return it.

    The sidecars must move too: SQLite would otherwise replay a stale ``-wal`` into the new file.
    """
    stamp = utcnow().strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    counter = 1
    while any(Path(f"{target}{suffix}").exists() for suffix in ("", *_SIDECARS)):
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{counter}")
        counter += 1
    try:
        os.replace(path, target)
        for suffix in _SIDECARS:
            sidecar = Path(f"{path}{suffix}")
            if sidecar.exists():
                os.replace(sidecar, Path(f"{target}{suffix}"))
    except OSError as exc:
        raise StoreError(f"cannot move corrupt session store {str(path)!r} aside: {exc}") from exc
    return target


def open_session_store(
    path: str | os.PathLike[str],
    *,
    on_error: RecoveryPolicy = "raise",
    busy_timeout_ms: int = 5000,
) -> SessionStore:
    """Open the store at ``path``, recovering from a damaged file as ``on_error`` says."""
    try:
        return SessionStore(path, busy_timeout_ms=busy_timeout_ms)
    except StoreCorruptError as exc:
        if on_error == "move_aside":
            moved = move_corrupt_aside(Path(path))
            store = SessionStore(path, busy_timeout_ms=busy_timeout_ms)
            logger.warning(
                "session store %s was corrupt (%s); moved it to %s and started an empty store",
                path,
                exc.detail,
                moved,
            )
            return store
        if on_error == "memory":
            return _fall_back_to_memory(path, exc, busy_timeout_ms)
        raise
    except StoreError as exc:
        if on_error == "memory":
            return _fall_back_to_memory(path, exc, busy_timeout_ms)
        raise


def _fall_back_to_memory(
    path: str | os.PathLike[str], exc: StoreError, busy_timeout_ms: int
) -> SessionStore:
    logger.error(
        "session store %s cannot be used (%s); keeping sessions in memory only, "
        "they will be lost when this process exits",
        path,
        exc,
    )
    return SessionStore(MEMORY, busy_timeout_ms=busy_timeout_ms)
