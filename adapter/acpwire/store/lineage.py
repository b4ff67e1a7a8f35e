"""Internal agent session ids behind each ACP session, for provenance.

The ACP session id is stable, but the agent may rotate its own session id mid-turn when it
compresses its context: the old internal session ends with reason ``"compression"`` and a
child whose parent is the old one continues. These rows record that chain so
:mod:`acpwire.server.sessions.provenance` can describe it to the client.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from acpwire.store.db import Database
from acpwire.store.values import format_ts, parse_ts, utcnow

__all__ = ["COMPRESSION", "InternalSessionRecord", "LineageMixin"]

COMPRESSION = "compression"
_COLUMNS = (
    "internal_id, acp_session_id, parent_internal_id, created_reason, end_reason, "
    "created_at, ended_at"
)


@dataclass(frozen=True, slots=True)
class InternalSessionRecord:
    internal_id: str
    acp_session_id: str
    parent_internal_id: str | None
    created_reason: str
    end_reason: str | None
    created_at: datetime
    ended_at: datetime | None


class LineageMixin(Database):
    """Rows of the ``internal_sessions`` table."""

    def record_internal_session(
        self,
        internal_id: str,
        acp_session_id: str,
        parent_internal_id: str | None = None,
        reason: str = "new",
        *,
        make_current: bool = True,
    ) -> InternalSessionRecord:
        """Record (or re-record) an internal session of ``acp_session_id``.

        ``reason`` says why it was created. A ``"compression"`` child implies its parent
        ended by compression, so a parent with no end reason yet gets that one. With
        ``make_current`` the ACP session's ``internal_id`` now names this session.
        """
        if not internal_id:
            raise ValueError("internal session id must be a non-empty string")
        if parent_internal_id == internal_id:
            raise ValueError(f"internal session {internal_id!r} cannot be its own parent")
        now = format_ts(utcnow())
        with self._write() as conn:
            self._require_session(conn, acp_session_id)
            conn.execute(
                "INSERT INTO internal_sessions "
                "(internal_id, acp_session_id, parent_internal_id, created_reason, created_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (internal_id) DO UPDATE SET "
                "acp_session_id = excluded.acp_session_id, "
                "parent_internal_id = excluded.parent_internal_id, "
                "created_reason = excluded.created_reason",
                (internal_id, acp_session_id, parent_internal_id, reason, now),
            )
            if reason == COMPRESSION and parent_internal_id is not None:
                conn.execute(
                    "UPDATE internal_sessions SET end_reason = ?, ended_at = ? "
                    "WHERE internal_id = ? AND end_reason IS NULL",
                    (COMPRESSION, now, parent_internal_id),
                )
            if make_current:
                conn.execute(
                    "UPDATE sessions SET internal_id = ? WHERE id = ?",
                    (internal_id, acp_session_id),
                )
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM internal_sessions WHERE internal_id = ?", (internal_id,)
            ).fetchone()
        return _to_record(row)

    def end_internal_session(self, internal_id: str, reason: str) -> bool:
        """Mark an internal session ended; False if it was never recorded."""
        if not reason:
            raise ValueError("end reason must be a non-empty string")
        with self._write() as conn:
            updated = conn.execute(
                "UPDATE internal_sessions SET end_reason = ?, ended_at = ? WHERE internal_id = ?",
                (reason, format_ts(utcnow()), internal_id),
            )
            return updated.rowcount > 0

    def get_internal_session(self, internal_id: str) -> InternalSessionRecord | None:
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM internal_sessions WHERE internal_id = ?", (internal_id,)
            ).fetchone()
        return None if row is None else _to_record(row)


def _to_record(
    row: tuple[str, str, str | None, str, str | None, str, str | None],
) -> InternalSessionRecord:
    internal_id, acp_id, parent, created_reason, end_reason, created_at, ended_at = row
    return InternalSessionRecord(
        internal_id=internal_id,
        acp_session_id=acp_id,
        parent_internal_id=parent,
        created_reason=created_reason,
        end_reason=end_reason,
        created_at=parse_ts(created_at),
        ended_at=None if ended_at is None else parse_ts(ended_at),
    )
