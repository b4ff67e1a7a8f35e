"""Prompts accepted while a turn runs ("queued"), kept until they run or are known not to.

The backend answers a prompt sent during a turn at once; the prompt runs after that
turn. So that nothing the client was told is taken is lost, the prompt is a row of
``pending_prompts`` before the answer is written. When its turn starts, its user message
joins the history and the row goes, in one transaction (:meth:`PendingMixin.start_pending_prompt`).
When it will never run (the turn before it was cancelled, or the process ended first and
the session is restored by a later one), :meth:`PendingMixin.settle_pending_prompts` moves
it into the transcript as archived rows: the user message and a note saying it was not
run. ``session/load`` replays both; the agent, resuming from the live history, sees
neither.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from acpwire.store.history import HistoryMixin, Message
from acpwire.store.values import dump_json, format_ts, load_json, utcnow

__all__ = ["NOT_RUN_CANCELLED", "NOT_RUN_STOPPED", "PendingMixin", "PendingPrompt", "not_run_note"]

NOT_RUN_CANCELLED = "the turn before it was cancelled"
NOT_RUN_STOPPED = "acpwire stopped before its turn came"


@dataclass(frozen=True, slots=True)
class PendingPrompt:
    id: int
    content: str | list[dict[str, Any]]
    display: str


def not_run_note(reason: str) -> Message:
    """The transcript's note after a queued prompt that never ran."""
    return {
        "role": "assistant",
        "content": f"[This queued prompt was not run: {reason}. Send it again to run it.]",
    }


class PendingMixin(HistoryMixin):
    """Rows of ``pending_prompts``; see the module docstring."""

    def add_pending_prompt(
        self, session_id: str, content: str | list[dict[str, Any]], display: str
    ) -> int:
        """Record an accepted prompt (committed when this returns); its row id."""
        text = dump_json(content, f"queued prompt for session {session_id!r}")
        with self._write() as conn:
            self._require_session(conn, session_id)
            cursor = conn.execute(
                "INSERT INTO pending_prompts (session_id, content, display, created_at) "
                "VALUES (?, ?, ?, ?)",
                (session_id, text, dump_json(display, "display"), format_ts(utcnow())),
            )
            assert cursor.lastrowid is not None
            return cursor.lastrowid

    def pending_prompts(self, session_id: str) -> list[PendingPrompt]:
        with self._read() as conn:
            rows = conn.execute(
                "SELECT id, content, display FROM pending_prompts WHERE session_id = ? ORDER BY id",
                (session_id,),
            ).fetchall()
        return [PendingPrompt(i, load_json(c), str(load_json(d))) for i, c, d in rows]

    def start_pending_prompt(self, session_id: str, pending_id: int, message: Message) -> None:
        """The queued prompt's turn starts: its user message joins the live history and
        its row goes, in one transaction."""
        (encoded,) = self._encoded(session_id, [message])
        now = format_ts(utcnow())
        with self._write() as conn:
            self._require_session(conn, session_id)
            conn.execute("DELETE FROM pending_prompts WHERE id = ?", (pending_id,))
            self._insert_live(conn, session_id, [encoded], now)
            self._touch(conn, session_id, now)

    def settle_pending_prompts(
        self, session_id: str, reason: str, ids: Sequence[int] | None = None
    ) -> int:
        """Move pending prompts (``ids``, or all of the session's) into the transcript as
        archived rows, each followed by a note that it was not run; how many moved."""
        now = format_ts(utcnow())
        with self._write() as conn:
            rows: list[tuple[int, str]] = conn.execute(
                "SELECT id, content FROM pending_prompts WHERE session_id = ? ORDER BY id",
                (session_id,),
            ).fetchall()
            chosen = [(i, c) for i, c in rows if ids is None or i in ids]
            if not chosen:
                return 0
            messages: list[Message] = []
            for _, content in chosen:
                messages += [{"role": "user", "content": load_json(content)}, not_run_note(reason)]
            self._insert_archived(conn, session_id, self._encoded(session_id, messages), now)
            conn.executemany("DELETE FROM pending_prompts WHERE id = ?", [(i,) for i, _ in chosen])
            return len(chosen)

    def _encoded(self, session_id: str, messages: Sequence[Message]) -> list[str]:
        return [dump_json(m, f"message for session {session_id!r}") for m in messages]

    @staticmethod
    def _insert_archived(
        conn: sqlite3.Connection, session_id: str, encoded: Sequence[str], now: str
    ) -> None:
        (next_seq,) = conn.execute(
            "SELECT COALESCE(MAX(seq), -1) + 1 FROM messages WHERE session_id = ?", (session_id,)
        ).fetchone()
        conn.executemany(
            "INSERT INTO messages (session_id, seq, pos, archived, message, created_at) "
            "VALUES (?, ?, NULL, 1, ?, ?)",
            [(session_id, next_seq + k, text, now) for k, text in enumerate(encoded)],
        )
