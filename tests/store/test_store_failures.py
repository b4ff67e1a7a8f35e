"""Failure handling: corrupt files, a locked database, recovery policies, schema versions."""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from acpwire.store import (
    SCHEMA_VERSION,
    SessionRecord,
    SessionStore,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    StoreVersionError,
    open_session_store,
)
from acpwire.store.schema import _to_v1, _to_v2

GARBAGE = b"this is not an sqlite database \x00\xff" * 200


def _write_garbage(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(GARBAGE)


def _damaged_store_file(db_path: Path) -> None:
    with SessionStore(db_path) as store:
        for i in range(40):
            store.create_session(SessionRecord(id=f"s{i}", cwd="/w"))
            store.append_messages(f"s{i}", [{"role": "user", "content": "x" * 400}] * 5)
    with db_path.open("r+b") as handle:
        handle.seek(4096 * 3)
        handle.write(b"\xa5" * 4096 * 4)


def test_garbage_file_raises_corrupt_error_naming_the_file(db_path: Path) -> None:
    _write_garbage(db_path)
    with pytest.raises(StoreCorruptError) as caught:
        SessionStore(db_path)
    assert str(db_path) in str(caught.value)
    assert caught.value.path == str(db_path)
    assert db_path.read_bytes() == GARBAGE  # untouched


@pytest.mark.parametrize(
    "content",
    [b"SQLite format 3\x00" + b"\xee" * 8000, b"short", b"SQLite format 3\x00" + b"\x00" * 84],
)
def test_damaged_header_raises_corrupt_error(db_path: Path, content: bytes) -> None:
    db_path.parent.mkdir(parents=True)
    db_path.write_bytes(content)
    with pytest.raises(StoreCorruptError, match="is corrupt"):
        SessionStore(db_path)


def test_damaged_pages_fail_the_integrity_check(db_path: Path) -> None:
    _damaged_store_file(db_path)
    with pytest.raises(StoreCorruptError, match="integrity check failed"):
        SessionStore(db_path)


def test_a_large_file_is_checked_after_opening_not_at_it(db_path: Path) -> None:
    _damaged_store_file(db_path)
    # Every file is "large" with a 0-byte limit: opening skips the full check...
    with SessionStore(db_path, check_at_open_max_bytes=0) as store:
        assert store.integrity_deferred
        # ...which a second connection runs later, while the store stays usable.
        problem = store.integrity_problem()
        assert problem is not None and problem != "ok"


def test_a_healthy_large_file_passes_the_later_check(db_path: Path) -> None:
    with SessionStore(db_path) as store:
        store.create_session(SessionRecord(id="s1", cwd="/w"))
    with SessionStore(db_path, check_at_open_max_bytes=0) as store:
        assert store.integrity_deferred
        assert store.integrity_problem() is None
        assert store.get_session("s1") is not None
    with SessionStore(db_path) as store:  # small enough: checked at open
        assert not store.integrity_deferred


def test_move_aside_keeps_the_corrupt_file_and_starts_fresh(
    db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _write_garbage(db_path)
    Path(f"{db_path}-wal").write_bytes(b"stale wal")
    with caplog.at_level(logging.WARNING, logger="acpwire.store"):
        store = open_session_store(db_path, on_error="move_aside")
    with store:
        assert store.persistent and store.path == str(db_path)
        store.create_session(SessionRecord(id="s1", cwd="/a"))
        assert store.get_session("s1") is not None
    moved = sorted(p for p in db_path.parent.iterdir() if ".corrupt-" in p.name)
    assert [p.name.endswith("-wal") for p in moved] == [False, True]
    assert moved[0].read_bytes() == GARBAGE
    assert moved[1].read_bytes() == b"stale wal"
    messages = [r.getMessage() for r in caplog.records]
    assert any(
        str(db_path) in m and f"moved it to {moved[0]}" in m and "started an empty store" in m
        for m in messages
    )


def test_move_aside_twice_does_not_overwrite(db_path: Path) -> None:
    for _ in range(2):
        _write_garbage(db_path)
        open_session_store(db_path, on_error="move_aside").close()
    assert len([p for p in db_path.parent.iterdir() if ".corrupt-" in p.name]) == 2


def test_memory_fallback_serves_sessions_and_logs(
    db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _write_garbage(db_path)
    with caplog.at_level(logging.ERROR, logger="acpwire.store"):
        store = open_session_store(db_path, on_error="memory")
    with store:
        assert not store.persistent
        store.create_session(SessionRecord(id="s1", cwd="/a"))
        store.append_messages("s1", [{"role": "user", "content": "hi"}])
        assert store.live_history("s1") == [{"role": "user", "content": "hi"}]
    assert db_path.read_bytes() == GARBAGE
    assert any(
        str(db_path) in r.getMessage() and "in memory only" in r.getMessage()
        for r in caplog.records
    )


def test_raise_policy_propagates(db_path: Path) -> None:
    _write_garbage(db_path)
    with pytest.raises(StoreCorruptError):
        open_session_store(db_path)


def test_locked_database_gives_busy_error_then_recovers(db_path: Path) -> None:
    with SessionStore(db_path, busy_timeout_ms=150) as store:
        store.create_session(SessionRecord(id="s1", cwd="/a"))
        other = sqlite3.connect(db_path, isolation_level=None)
        try:
            other.execute("BEGIN EXCLUSIVE")
            with pytest.raises(StoreBusyError) as caught:
                store.append_messages("s1", [{"role": "user", "content": "blocked"}])
            assert str(db_path) in str(caught.value) and "150 ms" in str(caught.value)
            with pytest.raises(StoreBusyError):
                store.create_session(SessionRecord(id="s2", cwd="/a"))
            # WAL readers are not blocked by the writer.
            assert store.get_session("s1") is not None
            other.execute("COMMIT")
        finally:
            other.close()
        store.append_messages("s1", [{"role": "user", "content": "after"}])
        assert store.live_history("s1") == [{"role": "user", "content": "after"}]
        assert store.get_session("s2") is None


def test_newer_schema_is_refused(db_path: Path) -> None:
    SessionStore(db_path).close()
    raw = sqlite3.connect(db_path)
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.close()
    with pytest.raises(StoreVersionError, match="newer"):
        SessionStore(db_path)
    with pytest.raises(StoreVersionError):
        open_session_store(db_path, on_error="move_aside")
    assert open_session_store(db_path, on_error="memory").persistent is False


def test_pragmas_and_schema_version(db_path: Path) -> None:
    with SessionStore(db_path):
        pass
    raw = sqlite3.connect(db_path)
    try:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        raw.close()


def test_foreign_keys_are_enforced(store: SessionStore) -> None:
    with pytest.raises(StoreError):
        store.record_internal_session("int-1", "no-such-session")


def test_unopenable_path_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="cannot create the folder"):
        SessionStore(blocker / "sub" / "sessions.db")
    fallback = open_session_store(blocker / "sub" / "sessions.db", on_error="memory")
    assert not fallback.persistent


def test_closed_store_raises(db_path: Path) -> None:
    store = SessionStore(db_path)
    store.close()
    store.close()
    with pytest.raises(StoreError, match="is closed"):
        store.get_session("x")


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_read_only_directory(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(StoreError):
            SessionStore(folder / "sessions.db")
    finally:
        folder.chmod(0o700)


def test_a_version_1_database_is_migrated_in_place(db_path: Path) -> None:
    """A session store written by an acpwire before the transcript start existed."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    raw = sqlite3.connect(db_path, isolation_level=None)
    stamp = "2025-01-01T00:00:00.000000Z"
    try:
        raw.execute("BEGIN")
        _to_v1(raw)
        raw.execute("PRAGMA user_version = 1")
        for sid in ("old", "reset"):
            raw.execute(
                "INSERT INTO sessions (id, cwd, cwd_key, created_at, updated_at) "
                "VALUES (?, '/w', '/w', ?, ?)",
                (sid, stamp, stamp),
            )
        rows = [
            ("old", 0, None, 1, "cleared by a /reset"),
            ("old", 1, 0, 0, "kept"),
            ("reset", 0, None, 1, "cleared"),
        ]
        for sid, seq, pos, archived, text in rows:
            raw.execute(
                "INSERT INTO messages (session_id, seq, pos, archived, message, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (sid, seq, pos, archived, json.dumps({"role": "user", "content": text}), stamp),
            )
        raw.execute("COMMIT")
    finally:
        raw.close()
    with SessionStore(db_path) as store:
        # What version 1 replayed, and never a conversation a /reset cleared.
        assert store.transcript("old") == [{"role": "user", "content": "kept"}]
        assert store.live_history("old") == [{"role": "user", "content": "kept"}]
        assert store.transcript("reset") == []
        store.append_messages("reset", [{"role": "user", "content": "new"}])
        assert store.transcript("reset") == [{"role": "user", "content": "new"}]
    raw = sqlite3.connect(db_path)
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        raw.close()


def test_version_2_command_allows_are_dropped_denies_kept(db_path: Path) -> None:
    """Version 2 keyed command approvals by the command with whitespace collapsed: an old
    "always allow" is dropped (asked again), an old "deny" stays."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    raw = sqlite3.connect(db_path, isolation_level=None)
    stamp = "2025-01-01T00:00:00.000000Z"
    try:
        raw.execute("BEGIN")
        _to_v1(raw)
        _to_v2(raw)
        raw.execute("PRAGMA user_version = 2")
        rows = [
            ("command", "cat > f <<EOF\n x\nEOF", "allow"),
            ("command", "curl x | sh", "deny"),
            ("edit", "src/a.py", "allow"),
        ]
        for kind, key, decision in rows:
            raw.execute(
                "INSERT INTO approvals (workspace_key, workspace, kind, key, decision, "
                "created_at) VALUES ('/w', '/w', ?, ?, ?, ?)",
                (kind, key, decision, stamp),
            )
        raw.execute("COMMIT")
    finally:
        raw.close()
    with SessionStore(db_path) as store:
        assert store.lookup_approval("/w", "command", "cat > f <<EOF\n x\nEOF") is None
        assert store.lookup_approval("/w", "command", "curl x | sh") == "deny"
        assert store.lookup_approval("/w", "edit", "src/a.py") == "allow"


def test_processes_opening_a_new_database_together_all_get_it(tmp_path: Path) -> None:
    """Several backends started at once on a fresh file: every one migrates or finds it
    migrated, none fails with "table sessions already exists"."""
    db = tmp_path / "home" / "sessions.db"
    db.parent.mkdir()
    start = time.time() + 1.0
    code = (
        "import sys, time; from acpwire.store import SessionStore\n"
        f"time.sleep(max(0.0, {start!r} - time.time()))\n"
        "store = SessionStore(sys.argv[1]); store.close(); print('ok')\n"
    )
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(db)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    results = [run.communicate(timeout=60) for run in runs]
    assert [out.strip() for out, _ in results] == ["ok"] * 4, [err for _, err in results]
    raw = sqlite3.connect(db)
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        raw.close()


def test_a_damaged_file_with_a_pending_log_is_left_as_it_was(tmp_path: Path) -> None:
    """A crashed process left write-ahead-log frames and the file has a damaged page:
    opening reports the damage and neither the file nor its log change (a writing
    connection's close would have folded the log into the damaged file)."""
    src = tmp_path / "src" / "sessions.db"
    with SessionStore(src) as store:
        for i in range(50):
            store.create_session(SessionRecord(id=f"s{i}", cwd="/w"))
            store.append_messages(f"s{i}", [{"role": "user", "content": "x" * 3000}])
    crashed = sqlite3.connect(src)
    crashed.execute("PRAGMA wal_autocheckpoint = 0")
    crashed.execute(
        "INSERT INTO sessions (id, cwd, cwd_key, created_at, updated_at) VALUES "
        "('late', '/w', '/w', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z')"
    )
    crashed.commit()
    db = tmp_path / "home" / "sessions.db"
    db.parent.mkdir()
    for suffix in ("", "-wal", "-shm"):
        shutil.copy(f"{src}{suffix}", f"{db}{suffix}")
    crashed.close()
    data = bytearray(db.read_bytes())
    data[4096 * 20 : 4096 * 21] = b"\xab" * 4096
    db.write_bytes(bytes(data))
    before = [Path(f"{db}{suffix}").read_bytes() for suffix in ("", "-wal")]
    with pytest.raises(StoreCorruptError):
        SessionStore(db)
    assert [Path(f"{db}{suffix}").read_bytes() for suffix in ("", "-wal")] == before
