"""Exceptions raised by the session store.

Every failure of the store surfaces as a :class:`StoreError` subclass whose message names the
database file, so the server can log it, answer a clear JSON-RPC error and keep running.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "SessionExistsError",
    "StoreBusyError",
    "StoreCorruptError",
    "StoreError",
    "StoreVersionError",
    "UnknownSessionError",
]


class StoreError(Exception):
    """Any failure of the session store."""


class StoreCorruptError(StoreError):
    """The database file is not a readable SQLite database or fails its integrity check."""

    def __init__(self, path: Path | str, detail: str) -> None:
        super().__init__(f"session store {str(path)!r} is corrupt: {detail}")
        self.path = str(path)
        self.detail = detail


class StoreBusyError(StoreError):
    """Another connection held the database lock for longer than the busy timeout."""

    def __init__(self, path: Path | str, timeout_ms: int) -> None:
        super().__init__(
            f"session store {str(path)!r} is locked by another connection "
            f"(gave up after {timeout_ms} ms); retry later"
        )
        self.path = str(path)
        self.timeout_ms = timeout_ms


class StoreVersionError(StoreError):
    """The database was written by a newer version of acpwire."""


class UnknownSessionError(StoreError):
    """An operation named a session id the store does not hold."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"unknown session {session_id!r}")
        self.session_id = session_id


class SessionExistsError(StoreError):
    """``create_session`` or ``fork_session`` was given an id that is already taken."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id!r} already exists")
        self.session_id = session_id
