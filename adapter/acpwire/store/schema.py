"""The session store's SQLite schema and its migrations.

``PRAGMA user_version`` holds the schema version. Each entry of ``_MIGRATIONS`` upgrades the
database by one version inside its own transaction, so a crash mid-upgrade leaves the file at
the previous version rather than half-migrated.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from acpwire.store.errors import StoreVersionError

__all__ = ["SCHEMA_VERSION", "migrate"]

# One statement per entry: executescript() would COMMIT the migration's transaction early.
_V1 = (
    """
CREATE TABLE sessions (
    id                TEXT PRIMARY KEY,
    cwd               TEXT NOT NULL,
    cwd_key           TEXT NOT NULL,
    title             TEXT,
    title_is_explicit INTEGER NOT NULL DEFAULT 0 CHECK (title_is_explicit IN (0, 1)),
    model             TEXT,
    mode              TEXT,
    config_options    TEXT NOT NULL DEFAULT '{}',
    internal_id       TEXT,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL
)
""",
    """
CREATE INDEX sessions_by_update ON sessions (updated_at DESC, id DESC)
""",
    """
CREATE INDEX sessions_by_cwd ON sessions (cwd_key, updated_at DESC, id DESC)
""",
    # seq is the insertion order (the chronological transcript); pos orders the live history
    # and is NULL once a row is archived. Rows are never deleted except with their session.
    """
CREATE TABLE messages (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    pos        INTEGER,
    archived   INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
    message    TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_id, seq),
    CHECK ((archived = 0) = (pos IS NOT NULL))
)
""",
    """
CREATE INDEX messages_live ON messages (session_id, archived, pos)
""",
    """
CREATE TABLE internal_sessions (
    internal_id        TEXT PRIMARY KEY,
    acp_session_id     TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    parent_internal_id TEXT,
    created_reason     TEXT NOT NULL,
    end_reason         TEXT,
    created_at         TEXT NOT NULL,
    ended_at           TEXT
)
""",
    """
CREATE INDEX internal_sessions_by_acp ON internal_sessions (acp_session_id)
""",
    """
CREATE TABLE approvals (
    workspace_key TEXT NOT NULL,
    workspace     TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('command', 'edit')),
    key           TEXT NOT NULL,
    decision      TEXT NOT NULL CHECK (decision IN ('allow', 'deny')),
    created_at    TEXT NOT NULL,
    PRIMARY KEY (workspace_key, kind, key)
)
""",
)


def _to_v1(conn: sqlite3.Connection) -> None:
    for statement in _V1:
        conn.execute(statement)


def _to_v2(conn: sqlite3.Connection) -> None:
    # The transcript a client sees on session/load starts at this seq: /reset moves it past
    # the rows it archived; compaction does not (its archived rows are still the story).
    conn.execute("ALTER TABLE sessions ADD COLUMN replay_from INTEGER NOT NULL DEFAULT 0")
    # Version 1 could not tell a /reset's archived rows from a compaction's: existing
    # sessions replay what they replayed before (from their first live row; nothing
    # after a reset), never a conversation the user cleared.
    conn.execute(
        "UPDATE sessions SET replay_from = COALESCE("
        "(SELECT MIN(seq) FROM messages WHERE session_id = sessions.id AND archived = 0), "
        "(SELECT COALESCE(MAX(seq), -1) + 1 FROM messages WHERE session_id = sessions.id))"
    )


def _to_v3(conn: sqlite3.Connection) -> None:
    # Command approvals were keyed by the command with whitespace runs collapsed, so one
    # "always allow" also allowed commands differing in a here-document's indentation.
    # Keys are now the exact command; the original of an old key is unknown: its "allow"
    # rows go (asked again), its "deny" rows stay (they can only refuse).
    conn.execute("DELETE FROM approvals WHERE kind = 'command' AND decision = 'allow'")


def _to_v4(conn: sqlite3.Connection) -> None:
    # Prompts answered "queued" while a turn ran, until their own turn starts (then the
    # user message replaces the row, in one transaction) or they are known never to run
    # (then they move to the transcript, archived, with a note saying so).
    conn.execute(
        "CREATE TABLE pending_prompts ("
        " id         INTEGER PRIMARY KEY AUTOINCREMENT,"
        " session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,"
        " content    TEXT NOT NULL,"
        " display    TEXT NOT NULL,"
        " created_at TEXT NOT NULL)"
    )
    conn.execute("CREATE INDEX pending_prompts_by_session ON pending_prompts (session_id, id)")


def _to_v5(conn: sqlite3.Connection) -> None:
    # Kind 'tool': "always allow this MCP tool" per workspace. SQLite cannot change a
    # CHECK constraint in place: the table is rebuilt with its rows.
    conn.execute("ALTER TABLE approvals RENAME TO approvals_v4")
    conn.execute(_V1[-1].replace("('command', 'edit')", "('command', 'edit', 'tool')"))
    conn.execute("INSERT INTO approvals SELECT * FROM approvals_v4")
    conn.execute("DROP TABLE approvals_v4")


_MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_to_v1, _to_v2, _to_v3, _to_v4, _to_v5]
SCHEMA_VERSION = len(_MIGRATIONS)


def migrate(conn: sqlite3.Connection, path: str) -> int:
    """Bring the database on ``conn`` (autocommit mode) to ``SCHEMA_VERSION``; return the old version."""
    (found,) = conn.execute("PRAGMA user_version").fetchone()
    version = int(found)
    if version > SCHEMA_VERSION:
        raise StoreVersionError(
            f"session store {path!r} has schema version {version}, newer than the "
            f"{SCHEMA_VERSION} this acpwire understands; upgrade acpwire or use another file"
        )
    for target in range(version + 1, SCHEMA_VERSION + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have migrated since the version was read: look again
            # under the write lock and skip what is done.
            (now,) = conn.execute("PRAGMA user_version").fetchone()
            if int(now) >= target:
                conn.execute("COMMIT")
                continue
            _MIGRATIONS[target - 1](conn)
            # user_version lives in the file header and is covered by the transaction.
            conn.execute(f"PRAGMA user_version = {target:d}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return version
