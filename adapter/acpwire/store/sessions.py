"""Session rows: create, read, update, delete, list with a cursor, and fork.

A session is keyed by its public ACP id, which never changes; ``internal_id`` is the agent's
current internal session id, which moves when the agent compresses its context.
"""

from __future__ import annotations

import base64
import binascii
import enum
import json
import os
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal

from acpwire.config.paths import normalize_for_compare
from acpwire.store.db import Database
from acpwire.store.errors import SessionExistsError, UnknownSessionError
from acpwire.store.values import (
    dump_json,
    format_ts,
    load_json,
    parse_ts,
    storable_text,
    utcnow,
)

__all__ = ["MAX_PAGE", "UNSET", "JsonObject", "SessionRecord", "SessionsMixin", "Unset"]

JsonObject = dict[str, Any]
"""A JSON object as the client sent it (config option values, chat messages)."""

MAX_PAGE: Final = 1000
_COLUMNS = (
    "id, cwd, title, title_is_explicit, model, mode, config_options, internal_id, "
    "created_at, updated_at"
)


class _Unset(enum.Enum):
    UNSET = "UNSET"


UNSET: Final = _Unset.UNSET
"""Marks a keyword of :meth:`SessionsMixin.update_session` as "leave unchanged"."""
Unset = Literal[_Unset.UNSET]


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """One ACP session's settings as stored; its messages live in the history tables."""

    id: str
    cwd: str
    title: str | None = None
    title_is_explicit: bool = False
    model: str | None = None
    mode: str | None = None
    config_options: JsonObject = field(default_factory=dict)
    internal_id: str | None = None
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)


def _row_to_record(row: sqlite3.Row | tuple[Any, ...]) -> SessionRecord:
    sid, cwd, title, explicit, model, mode, options, internal, created, updated = row
    return SessionRecord(
        id=sid,
        cwd=cwd,
        title=title,
        title_is_explicit=bool(explicit),
        model=model,
        mode=mode,
        config_options=load_json(options),
        internal_id=internal,
        created_at=parse_ts(created),
        updated_at=parse_ts(updated),
    )


def _check_id(session_id: str) -> None:
    if not isinstance(session_id, str) or not session_id:
        raise ValueError(f"session id must be a non-empty string, got {session_id!r}")


def _check_cwd(cwd: str) -> None:
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise ValueError(f"cwd must be an absolute path, got {cwd!r}")


def _encode_cursor(updated_at: str, session_id: str) -> str:
    raw = json.dumps([1, updated_at, session_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode("ascii")


def _decode_cursor(cursor: str) -> tuple[str, str]:
    try:
        decoded = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
        version, updated_at, session_id = decoded
        if version != 1 or not isinstance(session_id, str):
            raise ValueError("unknown cursor layout")
        parse_ts(updated_at)
    except (ValueError, TypeError, UnicodeError, binascii.Error) as exc:
        raise ValueError(f"invalid session list cursor {cursor!r}") from exc
    return updated_at, session_id


class SessionsMixin(Database):
    """Session rows. Every method is one short transaction."""

    def create_session(self, record: SessionRecord) -> SessionRecord:
        """Store a new session; raise :class:`SessionExistsError` if the id is taken."""
        _check_id(record.id)
        _check_cwd(record.cwd)
        options = dump_json(record.config_options, "config_options")
        updated_at = max(record.created_at, record.updated_at)
        with self._write() as conn:
            if self._session_exists(conn, record.id):
                raise SessionExistsError(record.id)
            conn.execute(
                f"INSERT INTO sessions ({_COLUMNS}, cwd_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.id,
                    record.cwd,
                    None if record.title is None else storable_text(record.title),
                    int(record.title_is_explicit),
                    record.model,
                    record.mode,
                    options,
                    record.internal_id,
                    format_ts(record.created_at),
                    format_ts(updated_at),
                    normalize_for_compare(record.cwd),
                ),
            )
            return self._fetch(conn, record.id)

    def get_session(self, session_id: str) -> SessionRecord | None:
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        return None if row is None else _row_to_record(row)

    def update_session(
        self,
        session_id: str,
        *,
        cwd: str | Unset = UNSET,
        title: str | Unset | None = UNSET,
        title_is_explicit: bool | Unset = UNSET,
        model: str | Unset | None = UNSET,
        mode: str | Unset | None = UNSET,
        config_options: JsonObject | Unset = UNSET,
        internal_id: str | Unset | None = UNSET,
        touch: bool = True,
    ) -> SessionRecord:
        """Change the given fields (others stay); ``touch`` also moves ``updated_at`` to now."""
        changes: dict[str, object] = {}
        if cwd is not UNSET:
            _check_cwd(cwd)
            changes["cwd"] = cwd
            changes["cwd_key"] = normalize_for_compare(cwd)
        if title_is_explicit is not UNSET:
            changes["title_is_explicit"] = int(title_is_explicit)
        if config_options is not UNSET:
            changes["config_options"] = dump_json(config_options, "config_options")
        for name, value in (
            ("title", title),
            ("model", model),
            ("mode", mode),
            ("internal_id", internal_id),
        ):
            if value is not UNSET:
                changes[name] = storable_text(value) if isinstance(value, str) else value
        if touch:
            changes["updated_at"] = format_ts(utcnow())
        with self._write() as conn:
            self._require_session(conn, session_id)
            if changes:
                assignments = ", ".join(f"{name} = ?" for name in changes)
                conn.execute(
                    f"UPDATE sessions SET {assignments} WHERE id = ?",
                    (*changes.values(), session_id),
                )
            return self._fetch(conn, session_id)

    def delete_session(self, session_id: str) -> bool:
        """Delete a session with its messages and lineage rows; False if it did not exist."""
        with self._write() as conn:
            return conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount > 0

    def list_sessions(
        self,
        cwd: str | None = None,
        cursor: str | None = None,
        limit: int = 50,
        *,
        with_history: bool = False,
    ) -> tuple[list[SessionRecord], str | None]:
        """One page, most recently updated first (ties by id); returns the next page's cursor.

        The cursor marks a position in that order, so sessions created meanwhile (which sort
        before it) neither shift nor repeat later pages. A session updated meanwhile moves to
        the front and is not shown again on later pages. ``with_history``: only sessions
        with at least one message (live or archived).
        """
        if not 1 <= limit <= MAX_PAGE:
            raise ValueError(f"limit must be between 1 and {MAX_PAGE}, got {limit}")
        where: list[str] = []
        params: list[object] = []
        if with_history:
            where.append("EXISTS (SELECT 1 FROM messages WHERE messages.session_id = sessions.id)")
        if cwd is not None:
            where.append("cwd_key = ?")
            params.append(normalize_for_compare(cwd))
        if cursor is not None:
            where.append("(updated_at, id) < (?, ?)")
            params.extend(_decode_cursor(cursor))
        sql = f"SELECT {_COLUMNS} FROM sessions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY updated_at DESC, id DESC LIMIT ?"
        params.append(limit + 1)
        with self._read() as conn:
            rows = conn.execute(sql, params).fetchall()
        page = [_row_to_record(row) for row in rows[:limit]]
        if len(rows) <= limit:
            return page, None
        last = rows[limit - 1]
        return page, _encode_cursor(last[9], last[0])

    def fork_session(self, source_id: str, new_id: str, cwd: str) -> SessionRecord:
        """Copy a session's settings and its history since its last ``/reset`` under a new id.

        Live and archived rows are copied as they are (a compaction's archived rows too),
        so the fork replays what its source replays (:meth:`transcript`) while its live
        history, what the agent resumes from, is the source's live history.

        The fork is titled ``"Fork of <title>"`` (no title if the source had none, keeping the
        source's ``title_is_explicit``) and has no internal id until the server records one.
        """
        _check_id(new_id)
        _check_cwd(cwd)
        now = format_ts(utcnow())
        with self._write() as conn:
            source = self._fetch(conn, source_id)
            if self._session_exists(conn, new_id):
                raise SessionExistsError(new_id)
            title = None if source.title is None else f"Fork of {source.title}"
            conn.execute(
                f"INSERT INTO sessions ({_COLUMNS}, cwd_key) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)",
                (
                    new_id,
                    cwd,
                    title,
                    int(source.title_is_explicit),
                    source.model,
                    source.mode,
                    dump_json(source.config_options, "config_options"),
                    now,
                    now,
                    normalize_for_compare(cwd),
                ),
            )
            # Renumbered from the source's transcript start (the fork's starts at 0);
            # live rows keep their place in the context, archived ones stay archived.
            conn.execute(
                "INSERT INTO messages (session_id, seq, pos, archived, message, created_at) "
                "SELECT ?, m.seq - s.replay_from, m.pos, m.archived, m.message, m.created_at "
                "FROM messages m JOIN sessions s ON s.id = m.session_id "
                "WHERE m.session_id = ? AND m.seq >= s.replay_from",
                (new_id, source_id),
            )
            return self._fetch(conn, new_id)

    def _fetch(self, conn: sqlite3.Connection, session_id: str) -> SessionRecord:
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        if row is None:
            raise UnknownSessionError(session_id)
        return _row_to_record(row)
