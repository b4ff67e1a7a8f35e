"""Message history: appends, end-of-turn replace, archiving on compression, concurrency."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from acpwire.store import HistoryChange, SessionRecord, SessionStore, UnknownSessionError

NewSession = Callable[..., SessionRecord]


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant_call(call_id: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "reasoning_content": "thinking",
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": "read_file", "arguments": "{}"},
            }
        ],
    }


def tool(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def test_append_preserves_order_and_content(store: SessionStore, new_session: NewSession) -> None:
    new_session("s1")
    turn = [user("read it"), assistant_call("c1"), tool("c1", "ünïcode ✓"), user("thanks")]
    assert store.append_messages("s1", turn[:2]) == [0, 1]
    assert store.append_messages("s1", turn[2:]) == [2, 3]
    assert store.append_messages("s1", []) == []
    assert store.live_history("s1") == turn
    assert store.full_history("s1") == turn


def test_append_bumps_updated_at(store: SessionStore, new_session: NewSession) -> None:
    before = new_session("s1").updated_at
    store.append_messages("s1", [user("x")])
    after = store.get_session("s1")
    assert after is not None and after.updated_at > before


def test_append_rejects_bad_messages_without_writing(
    store: SessionStore, new_session: NewSession
) -> None:
    new_session("s1")
    with pytest.raises(ValueError, match="message 1 for session 's1' must be a dict"):
        store.append_messages("s1", [user("ok"), {"content": "no role"}])
    with pytest.raises(ValueError, match="message 0 for session 's1' is not JSON-serialisable"):
        store.append_messages("s1", [{"role": "user", "content": {1, 2}}])
    with pytest.raises(ValueError, match="not JSON-serialisable"):
        store.append_messages("s1", [{"role": "user", "content": float("nan")}])
    assert store.full_history("s1") == []


def test_history_of_unknown_session_raises(store: SessionStore) -> None:
    for call in (
        lambda: store.append_messages("ghost", [user("x")]),
        lambda: store.replace_live_history("ghost", [user("x")]),
        lambda: store.live_history("ghost"),
        lambda: store.full_history("ghost"),
    ):
        with pytest.raises(UnknownSessionError, match="'ghost'"):
            call()


def test_end_of_turn_replace_after_appends_is_a_no_op(
    store: SessionStore, new_session: NewSession
) -> None:
    new_session("s1")
    history = [
        user("a"),
        assistant_call("c1"),
        tool("c1", "r"),
        {"role": "assistant", "content": "done"},
    ]
    for message in history:
        store.append_messages("s1", [message])
    # Same content, different key order: still equal.
    reordered = [dict(reversed(list(m.items()))) for m in history]
    assert store.replace_live_history("s1", reordered) == HistoryChange(archived=0, appended=0)
    assert store.replace_live_history("s1", history) == HistoryChange(archived=0, appended=0)
    assert [row.seq for row in store.history_rows("s1")] == [0, 1, 2, 3]


def test_replace_touches_an_unchanged_history_only_when_asked(
    store: SessionStore, new_session: NewSession
) -> None:
    new_session("s1")
    store.append_messages("s1", [user("a")])
    first = store.get_session("s1")
    assert first is not None
    store.replace_live_history("s1", [user("a")])
    unchanged = store.get_session("s1")
    assert unchanged is not None and unchanged.updated_at == first.updated_at
    change = store.replace_live_history("s1", [user("a")], touch=True)
    touched = store.get_session("s1")
    assert not change.changed
    assert touched is not None and touched.updated_at > first.updated_at


def test_replace_appends_messages_missed_during_the_turn(
    store: SessionStore, new_session: NewSession
) -> None:
    new_session("s1")
    store.append_messages("s1", [user("a")])
    full = [user("a"), assistant_call("c1"), tool("c1", "r")]
    assert store.replace_live_history("s1", full) == HistoryChange(archived=0, appended=2)
    assert store.live_history("s1") == full
    assert not store.replace_live_history("s1", full).changed


def test_compression_archives_rows_and_keeps_the_tail(
    store: SessionStore, new_session: NewSession
) -> None:
    new_session("s1")
    old = [user(f"m{i}") for i in range(10)]
    store.append_messages("s1", old)
    summary = {"role": "user", "content": "[summary of m0..m6]"}
    compressed = [summary, *old[7:]]
    change = store.replace_live_history("s1", compressed)
    assert change == HistoryChange(archived=7, appended=1)
    assert store.live_history("s1") == compressed
    rows = store.history_rows("s1")
    assert [r.message for r in rows] == [*old, summary]
    assert [r.archived for r in rows] == [True] * 7 + [False] * 3 + [False]
    assert store.full_history("s1", include_archived=False) == [*old[7:], summary]
    # Idempotent, and later turns append after the compressed history.
    assert not store.replace_live_history("s1", compressed).changed
    store.append_messages("s1", [user("next")])
    assert store.live_history("s1") == [*compressed, user("next")]


def test_compression_keeping_system_prefix(store: SessionStore, new_session: NewSession) -> None:
    new_session("s1")
    system = {"role": "system", "content": "you are helpful"}
    old = [system, *(user(f"m{i}") for i in range(5))]
    store.append_messages("s1", old)
    compressed = [system, user("summary"), old[-1]]
    assert store.replace_live_history("s1", compressed) == HistoryChange(archived=4, appended=1)
    assert store.live_history("s1") == compressed


def test_archived_rows_survive_repeated_compression_and_clear(
    store: SessionStore, new_session: NewSession
) -> None:
    new_session("s1")
    store.append_messages("s1", [user(f"a{i}") for i in range(4)])
    store.replace_live_history("s1", [user("sum1"), user("a3")])
    store.append_messages("s1", [user("b0"), user("b1")])
    store.replace_live_history("s1", [user("sum2"), user("b1")])
    store.replace_live_history("s1", [])
    assert store.live_history("s1") == []
    contents = [m["content"] for m in store.full_history("s1")]
    assert contents == ["a0", "a1", "a2", "a3", "sum1", "b0", "b1", "sum2"]
    assert all(row.archived for row in store.history_rows("s1"))


def test_duplicate_messages_are_matched_by_position(
    store: SessionStore, new_session: NewSession
) -> None:
    new_session("s1")
    store.append_messages("s1", [user("ok"), user("ok"), user("ok")])
    change = store.replace_live_history("s1", [user("ok"), user("ok")])
    assert change == HistoryChange(archived=1, appended=0)
    assert store.live_history("s1") == [user("ok"), user("ok")]
    assert len(store.full_history("s1")) == 3


def test_eight_threads_appending_to_their_own_sessions(
    store: SessionStore, new_session: NewSession
) -> None:
    threads, per_thread = 8, 40
    for t in range(threads):
        new_session(f"s{t}")
    barrier = threading.Barrier(threads)
    errors: list[BaseException] = []

    def worker(t: int) -> None:
        try:
            barrier.wait(timeout=30)
            for i in range(per_thread):
                store.append_messages(f"s{t}", [user(f"{t}:{i}"), tool(f"c{t}-{i}", "r")])
        except BaseException as exc:
            errors.append(exc)

    workers = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=60)
    assert errors == []
    for t in range(threads):
        history = store.live_history(f"s{t}")
        assert len(history) == 2 * per_thread
        assert [m["content"] for m in history[::2]] == [f"{t}:{i}" for i in range(per_thread)]
        assert [m["tool_call_id"] for m in history[1::2]] == [
            f"c{t}-{i}" for i in range(per_thread)
        ]


def test_threads_appending_to_one_session_lose_nothing(
    store: SessionStore, new_session: NewSession
) -> None:
    new_session("shared")
    threads, per_thread = 8, 25
    barrier = threading.Barrier(threads)

    def worker(t: int) -> None:
        barrier.wait(timeout=30)
        for i in range(per_thread):
            store.append_messages("shared", [user(f"{t}:{i}a"), user(f"{t}:{i}b")])

    workers = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=60)
    contents = [m["content"] for m in store.live_history("shared")]
    assert len(contents) == threads * per_thread * 2
    assert sorted(contents) == sorted(
        f"{t}:{i}{h}" for t in range(threads) for i in range(per_thread) for h in "ab"
    )
    # Each call's pair stays adjacent, and each thread's calls keep their order.
    for index in range(0, len(contents), 2):
        assert contents[index][:-1] == contents[index + 1][:-1]
    for t in range(threads):
        mine = [c for c in contents if c.startswith(f"{t}:") and c.endswith("a")]
        assert mine == [f"{t}:{i}a" for i in range(per_thread)]


def test_transcript_keeps_compacted_messages_and_reset_starts_it_over(
    store: SessionStore, new_session: NewSession
) -> None:
    sid = new_session("s1").id
    talk = [
        user("q1"),
        {"role": "assistant", "content": "a1"},
        user("q2"),
        {"role": "assistant", "content": "a2"},
    ]
    store.append_messages(sid, talk)
    summary = user("[summary of q1/a1]")
    store.replace_live_history(sid, [summary, *talk[2:]])  # a compaction
    assert store.live_history(sid) == [summary, *talk[2:]]
    # The transcript is the story: nothing compacted away is lost, the summary sits where
    # the compaction happened.
    assert store.transcript(sid) == [*talk, summary]
    store.append_messages(sid, [user("q3")])
    assert store.transcript(sid)[-1] == user("q3")

    change = store.clear_history(sid)
    assert change.archived == 4  # summary, q2, a2, q3
    assert store.live_history(sid) == []
    assert store.transcript(sid) == []
    store.append_messages(sid, [user("fresh")])
    assert store.transcript(sid) == [user("fresh")]
    assert len(store.full_history(sid)) == 7  # nothing was deleted


def test_a_compaction_keeps_the_rows_it_keeps_even_between_new_ones(
    store: SessionStore, new_session: NewSession
) -> None:
    """``[summary, *tail, note]``: the tail rows stay (same seq), nothing is stored twice."""
    sid = new_session("s1").id
    talk = [user(f"q{n}") for n in range(6)]
    store.append_messages(sid, talk)
    before = {row.message["content"]: row.seq for row in store.history_rows(sid)}
    compacted = [user("[summary]"), *talk[3:], user("[note]")]
    change = store.replace_live_history(sid, compacted)
    assert (change.archived, change.appended) == (3, 2)
    assert store.live_history(sid) == compacted
    rows = store.history_rows(sid)
    assert len(rows) == 8
    kept = {row.message["content"]: row.seq for row in rows if not row.archived}
    assert all(kept[f"q{n}"] == before[f"q{n}"] for n in (3, 4, 5))
    assert store.transcript(sid) == [*talk, user("[summary]"), user("[note]")]
