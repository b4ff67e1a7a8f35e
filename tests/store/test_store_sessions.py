"""Session rows: CRUD, listing with cursors and cwd filter, fork, persistence across reopen."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from acpwire.store import (
    SessionExistsError,
    SessionRecord,
    SessionStore,
    UnknownSessionError,
)

T0 = datetime(2025, 1, 1, tzinfo=UTC)
NewSession = Callable[..., SessionRecord]


def test_create_and_get_round_trip(store: SessionStore) -> None:
    record = SessionRecord(
        id="s1",
        cwd="/work/proj",
        title="Fix the bug",
        title_is_explicit=True,
        model="m-large",
        mode="code",
        config_options={"reasoning": "high", "nested": {"a": [1, 2]}},
        internal_id="int-1",
        created_at=T0,
        updated_at=T0 + timedelta(seconds=5),
    )
    assert store.create_session(record) == record
    assert store.get_session("s1") == record
    assert store.get_session("nope") is None


def test_create_rejects_duplicate_and_bad_input(
    store: SessionStore, new_session: NewSession
) -> None:
    new_session("s1")
    with pytest.raises(SessionExistsError, match="'s1' already exists"):
        new_session("s1")
    with pytest.raises(ValueError, match="cwd must be an absolute path, got 'rel'"):
        store.create_session(SessionRecord(id="s2", cwd="rel"))
    with pytest.raises(ValueError, match="session id"):
        store.create_session(SessionRecord(id="", cwd="/x"))
    with pytest.raises(ValueError, match="config_options is not JSON-serialisable"):
        store.create_session(SessionRecord(id="s3", cwd="/x", config_options={"a": object()}))
    assert store.get_session("s2") is None
    assert store.get_session("s3") is None


def test_update_changes_only_given_fields(store: SessionStore) -> None:
    created = store.create_session(
        SessionRecord(id="s1", cwd="/a", title="t", model="m1", created_at=T0, updated_at=T0)
    )
    updated = store.update_session("s1", model="m2", mode="ask", config_options={"k": "v"})
    assert (updated.model, updated.mode, updated.config_options) == ("m2", "ask", {"k": "v"})
    assert (updated.title, updated.cwd, updated.created_at) == ("t", "/a", created.created_at)
    assert updated.updated_at > created.updated_at
    cleared = store.update_session("s1", title=None, internal_id="int-9", cwd="/b", touch=False)
    assert (cleared.title, cleared.internal_id, cleared.cwd) == (None, "int-9", "/b")
    assert cleared.updated_at == updated.updated_at
    assert store.get_session("s1") == cleared


def test_update_unknown_session_raises(store: SessionStore) -> None:
    with pytest.raises(UnknownSessionError, match="'ghost'"):
        store.update_session("ghost", title="x")


def test_delete_cascades(store: SessionStore, new_session: NewSession) -> None:
    new_session("s1")
    store.append_messages("s1", [{"role": "user", "content": "hi"}])
    store.record_internal_session("int-1", "s1")
    assert store.delete_session("s1") is True
    assert store.get_session("s1") is None
    assert store.get_internal_session("int-1") is None
    assert store.delete_session("s1") is False
    # Recreating the id starts empty: no message rows survived the delete.
    new_session("s1")
    assert store.full_history("s1") == []


def _fill(store: SessionStore, count: int) -> list[str]:
    ids = []
    for i in range(count):
        # Groups of three share updated_at, so the id tie-break matters.
        stamp = T0 + timedelta(minutes=i // 3)
        cwd = "/work/even" if i % 2 == 0 else "/work/odd"
        store.create_session(
            SessionRecord(id=f"s{i:03d}", cwd=cwd, created_at=stamp, updated_at=stamp)
        )
        ids.append(f"s{i:03d}")
    return ids


def _expected_order(store: SessionStore, ids: list[str]) -> list[str]:
    records = [store.get_session(i) for i in ids]
    return [
        r.id
        for r in sorted(
            (r for r in records if r is not None), key=lambda r: (r.updated_at, r.id), reverse=True
        )
    ]


def test_list_pagination_over_120_sessions(store: SessionStore) -> None:
    ids = _fill(store, 120)
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        page, cursor = store.list_sessions(cursor=cursor, limit=25)
        seen.extend(r.id for r in page)
        pages += 1
        if cursor is None:
            break
    assert pages == 5
    assert seen == _expected_order(store, ids)
    assert len(set(seen)) == 120


def test_cursor_keeps_working_when_sessions_are_added(
    store: SessionStore, new_session: NewSession
) -> None:
    ids = _fill(store, 120)
    first, cursor = store.list_sessions(limit=50)
    for j in range(10):
        new_session(f"new{j}")
    rest: list[str] = []
    while cursor is not None:
        page, cursor = store.list_sessions(cursor=cursor, limit=50)
        rest.extend(r.id for r in page)
    assert [r.id for r in first] + rest == _expected_order(store, ids)


def test_list_exact_multiple_has_no_trailing_cursor(store: SessionStore) -> None:
    _fill(store, 10)
    page, cursor = store.list_sessions(limit=10)
    assert len(page) == 10
    assert cursor is None
    assert store.list_sessions(limit=5)[1] is not None


def test_list_cwd_filter_uses_normalized_comparison(
    store: SessionStore, new_session: NewSession
) -> None:
    ids = _fill(store, 12)
    new_session("win", cwd="/mnt/c/Users/me/proj")
    even = [r.id for r in store.list_sessions(cwd="/work/even/", limit=100)[0]]
    assert even == [i for i in _expected_order(store, ids) if int(i[1:]) % 2 == 0]
    assert [r.id for r in store.list_sessions(cwd="/work//odd/.", limit=100)[0]] == [
        i for i in _expected_order(store, ids) if int(i[1:]) % 2 == 1
    ]
    assert [r.id for r in store.list_sessions(cwd=r"C:\Users\me\proj", limit=100)[0]] == ["win"]
    assert [r.id for r in store.list_sessions(cwd="/mnt/C/Users/me/proj", limit=100)[0]] == ["win"]
    assert store.list_sessions(cwd="/work", limit=100) == ([], None)


def test_list_filtered_pagination(store: SessionStore) -> None:
    ids = _fill(store, 120)
    collected: list[str] = []
    cursor: str | None = None
    while True:
        page, cursor = store.list_sessions(cwd="/work/odd", cursor=cursor, limit=7)
        collected.extend(r.id for r in page)
        if cursor is None:
            break
    assert collected == [i for i in _expected_order(store, ids) if int(i[1:]) % 2 == 1]


@pytest.mark.parametrize("cursor", ["", "not base64 !", "bm9wZQ==", "WzEsIngiLCJ5Il0=", "W10="])
def test_invalid_cursor_raises_value_error(store: SessionStore, cursor: str) -> None:
    with pytest.raises(ValueError, match="invalid session list cursor"):
        store.list_sessions(cursor=cursor)


@pytest.mark.parametrize("limit", [0, -1, 1001])
def test_invalid_limit(store: SessionStore, limit: int) -> None:
    with pytest.raises(ValueError, match="limit must be between 1 and 1000"):
        store.list_sessions(limit=limit)


def test_fork_copies_settings_and_the_transcript_with_its_live_part(store: SessionStore) -> None:
    store.create_session(
        SessionRecord(
            id="src",
            cwd="/a",
            title="Refactor",
            title_is_explicit=True,
            model="m",
            mode="code",
            config_options={"r": "low"},
            internal_id="int-src",
        )
    )
    msgs = [{"role": "user", "content": f"m{i}"} for i in range(6)]
    store.append_messages("src", msgs)
    summary = {"role": "user", "content": "summary"}
    store.replace_live_history("src", [summary, *msgs[4:]])
    fork = store.fork_session("src", "dst", "/b")
    assert (fork.id, fork.cwd, fork.title, fork.model, fork.mode) == (
        "dst",
        "/b",
        "Fork of Refactor",
        "m",
        "code",
    )
    assert fork.config_options == {"r": "low"}
    assert fork.internal_id is None
    assert store.live_history("dst") == [summary, *msgs[4:]]
    # What the source replays, compacted rows included; nothing from before a /reset.
    assert store.transcript("dst") == store.transcript("src") == [*msgs, summary]
    # The fork is independent of its source.
    store.append_messages("dst", [{"role": "user", "content": "only in fork"}])
    assert store.live_history("src") == [summary, *msgs[4:]]
    store.clear_history("src")
    store.append_messages("src", [{"role": "user", "content": "after reset"}])
    again = store.fork_session("src", "dst2", "/c")
    assert store.transcript(again.id) == [{"role": "user", "content": "after reset"}]
    assert store.full_history(again.id) == store.live_history(again.id)


def test_fork_without_title_and_errors(store: SessionStore, new_session: NewSession) -> None:
    new_session("src")
    assert store.fork_session("src", "f1", "/x").title is None
    with pytest.raises(UnknownSessionError):
        store.fork_session("ghost", "f2", "/x")
    with pytest.raises(SessionExistsError):
        store.fork_session("src", "f1", "/x")
    with pytest.raises(ValueError, match="cwd must be an absolute path"):
        store.fork_session("src", "f3", "x")


def test_everything_survives_close_and_reopen(db_path: Path) -> None:
    with SessionStore(db_path) as first:
        first.create_session(SessionRecord(id="s1", cwd="/a", title="T", model="m"))
        first.append_messages("s1", [{"role": "user", "content": "hello"}])
        first.record_internal_session("int-1", "s1")
        first.remember_approval("/a", "command", "rm -rf", "deny")
        expected = first.get_session("s1")
    with SessionStore(db_path) as second:
        assert second.get_session("s1") == expected
        assert second.live_history("s1") == [{"role": "user", "content": "hello"}]
        internal = second.get_internal_session("int-1")
        assert internal is not None and internal.acp_session_id == "s1"
        assert second.lookup_approval("/a", "command", "rm -rf") == "deny"


def test_acknowledged_writes_survive_a_killed_process(db_path: Path) -> None:
    script = (
        "import os, sys\n"
        "from acpwire.store import SessionStore, SessionRecord\n"
        "s = SessionStore(sys.argv[1])\n"
        "s.create_session(SessionRecord(id='s1', cwd='/a'))\n"
        "for i in range(20):\n"
        "    s.append_messages('s1', [{'role': 'user', 'content': str(i)}])\n"
        "os._exit(3)\n"  # no close, no checkpoint, no atexit
    )
    done = subprocess.run([sys.executable, "-c", script, str(db_path)], timeout=60, check=False)
    assert done.returncode == 3
    with SessionStore(db_path) as reopened:
        assert [m["content"] for m in reopened.live_history("s1")] == [str(i) for i in range(20)]


def test_list_with_history_leaves_out_sessions_without_messages(
    store: SessionStore, new_session: NewSession
) -> None:
    talked, compacted, empty = (new_session(name) for name in ("talked", "compacted", "empty"))
    store.append_messages(talked.id, [{"role": "user", "content": "hi"}])
    store.append_messages(compacted.id, [{"role": "user", "content": "old"}])
    store.replace_live_history(compacted.id, [])  # archived rows still count
    everything = {r.id for r in store.list_sessions(limit=10)[0]}
    assert everything == {talked.id, compacted.id, empty.id}
    listed = {r.id for r in store.list_sessions(limit=10, with_history=True)[0]}
    assert listed == {talked.id, compacted.id}
