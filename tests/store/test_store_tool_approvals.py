"""Schema version 5: the approvals table takes kind ``tool`` (always-allowed MCP tools);
a version 3 database keeps its remembered decisions through the migration."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from acpwire.store import SessionStore
from acpwire.store.schema import SCHEMA_VERSION, _to_v1, _to_v2, _to_v3


def test_a_version_3_database_keeps_its_approvals_and_takes_tools(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    raw = sqlite3.connect(db, isolation_level=None)
    try:
        raw.execute("BEGIN")
        _to_v1(raw)
        _to_v2(raw)
        _to_v3(raw)
        raw.execute("PRAGMA user_version = 3")
        raw.execute(
            "INSERT INTO approvals VALUES ('/w', '/w', 'command', 'make', 'allow', "
            "'2025-01-01T00:00:00.000000Z')"
        )
        raw.execute("COMMIT")
    finally:
        raw.close()
    with SessionStore(db) as store:
        assert store.lookup_approval("/w", "command", "make") == "allow"
        store.remember_approval("/w", "tool", "git__push", "allow")
        assert store.lookup_approval("/w", "tool", "git__push") == "allow"
        assert store.lookup_approval("/other", "tool", "git__push") is None
        assert [(r.kind, r.key) for r in store.list_approvals("/w")] == [
            ("command", "make"),
            ("tool", "git__push"),
        ]
        assert store.revoke_approval("/w", "tool", "git__push")
    raw = sqlite3.connect(db)
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5
    finally:
        raw.close()
