"""The SQLite connection behind the session store: opening, pragmas, locking, transactions.

One connection opened with ``check_same_thread=False`` is shared by the event loop and the
worker threads; a re-entrant lock serialises its use. Every write runs in its own
``BEGIN IMMEDIATE`` transaction that is committed before the call returns, with
``synchronous=FULL``, so whatever a call acknowledged survives a crash of the process.
SQLite failures are translated into :mod:`acpwire.store.errors` exceptions naming the file.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Self

from acpwire.store.errors import (
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    UnknownSessionError,
)
from acpwire.store.schema import SCHEMA_VERSION, migrate

__all__ = ["MEMORY", "Database"]

logger = logging.getLogger(__name__)

MEMORY = ":memory:"
CHECK_AT_OPEN_MAX_BYTES = 32 * 1024 * 1024
"""Larger files are integrity-checked after start-up (``Database.integrity_deferred``)."""
_BUSY_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
_CORRUPT_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
_MAGIC = b"SQLite format 3\x00"
_HEADER_SIZE = 100


def _check_header(path: str) -> None:
    """Refuse a non-SQLite file before SQLite opens it.

    SQLite would otherwise fail only at the first read and, on closing, delete a ``-wal`` file
    lying next to it, destroying what a user might still recover.
    """
    try:
        with open(path, "rb") as handle:
            header = handle.read(_HEADER_SIZE)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"cannot read session store {path!r}: {exc}") from exc
    if header and (len(header) < _HEADER_SIZE or not header.startswith(_MAGIC)):
        raise StoreCorruptError(path, "file is not an SQLite database (bad header)")


class Database:
    """Owns the connection; the store's mixins reach SQLite only through ``_read``/``_write``."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout_ms: int = 5000,
        check_integrity: bool = True,
        check_at_open_max_bytes: int = CHECK_AT_OPEN_MAX_BYTES,
    ) -> None:
        if busy_timeout_ms < 0:
            raise ValueError(f"busy_timeout_ms must be >= 0, got {busy_timeout_ms}")
        self._path = MEMORY if str(path) == MEMORY else str(Path(path))
        self._busy_timeout_ms = busy_timeout_ms
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._check_at_open_max = check_at_open_max_bytes
        self.integrity_deferred = False
        """The file was too large to check at open: run :meth:`integrity_problem` later."""
        self._checked = False
        if self.persistent:
            try:
                Path(self._path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(
                    f"cannot create the folder of session store {self._path!r}: {exc}"
                ) from exc
            _check_header(self._path)
            self._check_before_writing(check_integrity)
        try:
            conn = sqlite3.connect(
                self._path,
                timeout=busy_timeout_ms / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise self._translate(exc) from exc
        try:
            old_version = self._prepare(conn, check_integrity)
        except sqlite3.Error as exc:
            conn.close()
            raise self._translate(exc) from exc
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        if old_version != SCHEMA_VERSION:
            logger.info(
                "session store %s: schema migrated from v%d to v%d",
                self._path,
                old_version,
                SCHEMA_VERSION,
            )

    def _prepare(self, conn: sqlite3.Connection, check_integrity: bool) -> int:
        conn.execute(f"PRAGMA busy_timeout = {self._busy_timeout_ms:d}")
        conn.execute("PRAGMA foreign_keys = ON")
        if self.persistent:
            # The first statement that reads the file: garbage fails here with SQLITE_NOTADB.
            mode = self._journal_mode_wal(conn)
            if str(mode).lower() != "wal":
                logger.warning(
                    "session store %s: WAL unavailable, journal mode is %s", self._path, mode
                )
            conn.execute("PRAGMA synchronous = FULL")
            if check_integrity and self._file_bytes() > self._check_at_open_max:
                # quick_check reads every page: seconds for a large history, every start.
                self.integrity_deferred = True
            elif check_integrity and not self._checked:
                (verdict,) = conn.execute("PRAGMA quick_check(1)").fetchone()
                if verdict != "ok":
                    raise StoreCorruptError(self._path, f"integrity check failed: {verdict}")
        return migrate(conn, self._path)

    def _check_before_writing(self, check_integrity: bool) -> None:
        """Check an existing file read-only before a writing connection opens it: closing
        a writing connection would fold a crashed process's write-ahead log into a
        damaged file, which must stay as it was for inspection."""
        path = Path(self._path)
        if not check_integrity or not path.exists() or self._file_bytes() > self._check_at_open_max:
            return
        problem = self.integrity_problem()
        if problem is None:
            self._checked = True
        elif not problem.startswith("cannot open it"):  # else: checked on the writer
            raise StoreCorruptError(self._path, f"integrity check failed: {problem}")

    def _journal_mode_wal(self, conn: sqlite3.Connection) -> str:
        """Switch to WAL. SQLite answers "locked" at once, without waiting, when another
        process is switching the same new file: retried until the busy timeout."""
        deadline = time.monotonic() + self._busy_timeout_ms / 1000
        while True:
            try:
                (mode,) = conn.execute("PRAGMA journal_mode = WAL").fetchone()
                return str(mode)
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.02)

    def _file_bytes(self) -> int:
        """The database file and its write-ahead log, in bytes."""
        total = 0
        for suffix in ("", "-wal"):
            with contextlib.suppress(OSError):
                total += os.path.getsize(self._path + suffix)
        return total

    def integrity_problem(self) -> str | None:
        """SQLite's ``quick_check`` verdict when it is not "ok", else None.

        Runs on a connection of its own (read-only, WAL lets it read while the store
        writes), so a large file can be checked in the background.
        """
        try:
            conn = sqlite3.connect(
                f"{Path(self._path).resolve().as_uri()}?mode=ro",
                uri=True,
                timeout=self._busy_timeout_ms / 1000,
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            return f"cannot open it to check it: {exc}"
        try:
            (verdict,) = conn.execute("PRAGMA quick_check(1)").fetchone()
        except sqlite3.DatabaseError as exc:
            return str(exc)
        finally:
            conn.close()
        return None if verdict == "ok" else str(verdict)

    @property
    def path(self) -> str:
        """The database file, or ``":memory:"`` for a store that will not survive a restart."""
        return self._path

    @property
    def persistent(self) -> bool:
        return self._path != MEMORY

    @property
    def busy_timeout_ms(self) -> int:
        return self._busy_timeout_ms

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _translate(self, exc: sqlite3.Error) -> StoreError:
        code = getattr(exc, "sqlite_errorcode", None)
        primary = code & 0xFF if isinstance(code, int) else None
        text = str(exc)
        if primary in _BUSY_CODES or "database is locked" in text:
            return StoreBusyError(self._path, self._busy_timeout_ms)
        if primary in _CORRUPT_CODES or "malformed" in text or "not a database" in text:
            return StoreCorruptError(self._path, text)
        return StoreError(f"session store {self._path!r}: {type(exc).__name__}: {text}")

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"session store {self._path!r} is closed")
        return self._conn

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._connection()
            try:
                conn.execute(begin)
            except sqlite3.Error as exc:
                raise self._translate(exc) from exc
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:
                    try:
                        conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        logger.exception("session store %s: rollback failed", self._path)
                if isinstance(exc, sqlite3.Error):
                    raise self._translate(exc) from exc
                raise

    @staticmethod
    def _session_exists(conn: sqlite3.Connection, session_id: str) -> bool:
        found = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return found is not None

    def _require_session(self, conn: sqlite3.Connection, session_id: str) -> None:
        if not self._session_exists(conn, session_id):
            raise UnknownSessionError(session_id)

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction, holding the write lock from its start (no upgrade deadlocks)."""
        with self._transaction("BEGIN IMMEDIATE") as conn:
            yield conn

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: one consistent snapshot for several SELECTs."""
        with self._transaction("BEGIN DEFERRED") as conn:
            yield conn
