"""A session's chat messages: the live history the agent resumes from, plus the archive.

Each message row has ``seq`` (insertion order: the chronological transcript) and, while it is
part of the live history, ``pos`` (its place in the agent's context). A turn appends its
messages as they happen (durable even if the process dies mid-turn); at the end of the turn
the agent's whole history is handed to :meth:`HistoryMixin.replace_live_history`, which keeps
the rows that still match, archives the ones that dropped out (context compression) and adds
the new ones. Nothing is ever deleted, and repeating the call changes nothing.
"""

from __future__ import annotations

import difflib
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from acpwire.store.db import Database
from acpwire.store.values import dump_json, format_ts, load_json, parse_ts, utcnow

__all__ = ["HistoryChange", "HistoryMixin", "Message", "StoredMessage"]

Message = dict[str, Any]
"""One chat message in OpenAI chat-completions shape (role, content, tool_calls, ...)."""


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """A message row with its bookkeeping, for replay and inspection."""

    seq: int
    message: Message
    archived: bool
    created_at: datetime


@dataclass(frozen=True, slots=True)
class HistoryChange:
    """What :meth:`HistoryMixin.replace_live_history` did."""

    archived: int
    appended: int

    @property
    def changed(self) -> bool:
        return bool(self.archived or self.appended)


def _encode(session_id: str, messages: Sequence[Message]) -> list[str]:
    encoded: list[str] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise ValueError(
                f"message {index} for session {session_id!r} must be a dict with a string "
                f"'role', got {message!r:.200}"
            )
        encoded.append(dump_json(message, f"message {index} for session {session_id!r}"))
    return encoded


def _kept_rows(old: Sequence[str], new: Sequence[str]) -> dict[int, int]:
    """Which new messages are old rows unchanged: new index -> old index, in order."""
    if old == new[: len(old)]:  # the common case, a turn appending: no alignment needed
        return {i: i for i in range(len(old))}
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return {
        block.b + k: block.a + k
        for block in matcher.get_matching_blocks()
        for k in range(block.size)
    }


class HistoryMixin(Database):
    """Message storage; see the module docstring for the live/archived model."""

    def append_messages(
        self, session_id: str, messages: Sequence[Message], *, touch: bool = True
    ) -> list[int]:
        """Append to the live history in one transaction; return the new rows' ``seq``.
        ``touch`` (the default) marks the session used now."""
        encoded = _encode(session_id, messages)
        if not encoded:
            return []
        now = format_ts(utcnow())
        with self._write() as conn:
            self._require_session(conn, session_id)
            seqs = self._insert_live(conn, session_id, encoded, now)
            if touch:
                self._touch(conn, session_id, now)
            return seqs

    def replace_live_history(
        self, session_id: str, messages: Sequence[Message], *, touch: bool = False
    ) -> HistoryChange:
        """Make the live history equal ``messages``, archiving (never deleting) what dropped out.

        ``updated_at`` moves when the history changed, or always with ``touch`` (a turn
        that ends saves its history and marks the session used in one transaction).

        Old rows that reappear unchanged, in the same order, are kept (the longest such
        run first, as ``difflib`` aligns them); the other old rows are archived and the
        other new messages added. So a compressed history ``[summary, *tail, note]``
        keeps the tail rows instead of storing them twice.
        """
        new = _encode(session_id, messages)
        now = format_ts(utcnow())
        with self._write() as conn:
            self._require_session(conn, session_id)
            rows: list[tuple[int, str]] = conn.execute(
                "SELECT seq, message FROM messages WHERE session_id = ? AND archived = 0 ORDER BY pos",
                (session_id,),
            ).fetchall()
            old = [text for _, text in rows]
            kept = _kept_rows(old, new)  # new index -> old index
            still = set(kept.values())
            dropped = [seq for i, (seq, _) in enumerate(rows) if i not in still]
            added = [text for j, text in enumerate(new) if j not in kept]
            if not dropped and not added:
                if touch:
                    self._touch(conn, session_id, now)
                return HistoryChange(archived=0, appended=0)
            conn.executemany(
                "UPDATE messages SET archived = 1, pos = NULL WHERE session_id = ? AND seq = ?",
                [(session_id, seq) for seq in dropped],
            )
            fresh = iter(self._insert_live(conn, session_id, added, now))
            order = [rows[kept[j]][0] if j in kept else next(fresh) for j in range(len(new))]
            conn.executemany(
                "UPDATE messages SET pos = ? WHERE session_id = ? AND seq = ?",
                [(pos, session_id, seq) for pos, seq in enumerate(order)],
            )
            self._touch(conn, session_id, now)
            return HistoryChange(archived=len(dropped), appended=len(added))

    def clear_history(self, session_id: str) -> HistoryChange:
        """Start the conversation over: archive the live history and begin the transcript
        (:meth:`transcript`) after it, in one transaction."""
        now = format_ts(utcnow())
        with self._write() as conn:
            self._require_session(conn, session_id)
            archived = conn.execute(
                "UPDATE messages SET archived = 1, pos = NULL WHERE session_id = ? AND archived = 0",
                (session_id,),
            ).rowcount
            conn.execute(
                "UPDATE sessions SET replay_from = (SELECT COALESCE(MAX(seq), -1) + 1 "
                "FROM messages WHERE session_id = ?) WHERE id = ?",
                (session_id, session_id),
            )
            self._touch(conn, session_id, now)
        return HistoryChange(archived=archived, appended=0)

    def transcript(self, session_id: str) -> list[Message]:
        """The conversation as it happened since the last :meth:`clear_history`: archived
        and live messages in the order they were stored (a compaction's summary where the
        compaction happened), for replay to a client."""
        with self._read() as conn:
            self._require_session(conn, session_id)
            rows = conn.execute(
                "SELECT m.message FROM messages m JOIN sessions s ON s.id = m.session_id "
                "WHERE m.session_id = ? AND m.seq >= s.replay_from ORDER BY m.seq",
                (session_id,),
            ).fetchall()
        return [load_json(text) for (text,) in rows]

    def live_history(self, session_id: str) -> list[Message]:
        """The messages the agent should resume from, in context order."""
        with self._read() as conn:
            self._require_session(conn, session_id)
            rows = conn.execute(
                "SELECT message FROM messages WHERE session_id = ? AND archived = 0 ORDER BY pos",
                (session_id,),
            ).fetchall()
        return [load_json(text) for (text,) in rows]

    def full_history(self, session_id: str, include_archived: bool = True) -> list[Message]:
        """Every message in the order it was stored (archived ones too unless told otherwise)."""
        return [
            row.message
            for row in self.history_rows(session_id)
            if include_archived or not row.archived
        ]

    def history_rows(self, session_id: str) -> list[StoredMessage]:
        """All message rows of a session in insertion order, with their archived flag."""
        with self._read() as conn:
            self._require_session(conn, session_id)
            rows = conn.execute(
                "SELECT seq, message, archived, created_at FROM messages "
                "WHERE session_id = ? ORDER BY seq",
                (session_id,),
            ).fetchall()
        return [
            StoredMessage(
                seq=seq, message=load_json(text), archived=bool(flag), created_at=parse_ts(ts)
            )
            for seq, text, flag, ts in rows
        ]

    @staticmethod
    def _insert_live(
        conn: sqlite3.Connection, session_id: str, encoded: Sequence[str], now: str
    ) -> list[int]:
        next_seq, next_pos = conn.execute(
            "SELECT COALESCE(MAX(seq), -1) + 1, COALESCE(MAX(pos), -1) + 1 FROM messages "
            "WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        seqs = list(range(next_seq, next_seq + len(encoded)))
        conn.executemany(
            "INSERT INTO messages (session_id, seq, pos, archived, message, created_at) "
            "VALUES (?, ?, ?, 0, ?, ?)",
            [
                (session_id, seq, next_pos + offset, text, now)
                for offset, (seq, text) in enumerate(zip(seqs, encoded, strict=True))
            ],
        )
        return seqs

    @staticmethod
    def _touch(conn: sqlite3.Connection, session_id: str, now: str) -> None:
        conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, session_id))
