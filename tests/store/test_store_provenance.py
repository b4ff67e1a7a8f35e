"""Lineage rows in the store and the provenance built from them (Hermes field names and rules)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from acpwire.server.sessions.provenance import MAX_WALK, build_provenance, provenance_meta
from acpwire.store import SessionRecord, SessionStore

NewSession = Callable[..., SessionRecord]


@pytest.fixture
def acp(store: SessionStore, new_session: NewSession) -> str:
    new_session("acp-1")
    return "acp-1"


def test_record_and_end_internal_sessions(store: SessionStore, acp: str) -> None:
    first = store.record_internal_session("h1", acp)
    assert (first.parent_internal_id, first.created_reason, first.end_reason) == (None, "new", None)
    session = store.get_session(acp)
    assert session is not None and session.internal_id == "h1"
    assert store.end_internal_session("h1", "user_exit") is True
    ended = store.get_internal_session("h1")
    assert ended is not None and ended.end_reason == "user_exit" and ended.ended_at is not None
    assert store.end_internal_session("unknown", "x") is False
    assert store.get_internal_session("unknown") is None
    store.record_internal_session("side", acp, make_current=False)
    session = store.get_session(acp)
    assert session is not None and session.internal_id == "h1"


def test_compression_child_ends_its_parent(store: SessionStore, acp: str) -> None:
    store.record_internal_session("h1", acp)
    store.record_internal_session("h2", acp, "h1", "compression")
    parent = store.get_internal_session("h1")
    assert parent is not None and parent.end_reason == "compression"
    # An explicit earlier end reason is not overwritten.
    store.record_internal_session("h3", acp)
    store.end_internal_session("h3", "branched")
    store.record_internal_session("h4", acp, "h3", "compression")
    other = store.get_internal_session("h3")
    assert other is not None and other.end_reason == "branched"


def test_record_rejects_self_parent(store: SessionStore, acp: str) -> None:
    with pytest.raises(ValueError, match="own parent"):
        store.record_internal_session("h1", acp, "h1")


def test_root_session(store: SessionStore, acp: str) -> None:
    store.record_internal_session("h1", acp)
    assert build_provenance(store, acp, "h1") == {
        "acpSessionId": acp,
        "currentHermesSessionId": "h1",
        "rootHermesSessionId": "h1",
        "parentHermesSessionId": None,
        "sessionKind": "root",
        "compressionDepth": 0,
    }
    same = build_provenance(store, acp, "h1", previous_internal_id="h1")
    assert same is not None
    assert same["previousHermesSessionId"] == "h1"
    assert "reason" not in same and "creatorKind" not in same


def test_continuation_after_rotation(store: SessionStore, acp: str) -> None:
    store.record_internal_session("h1", acp)
    store.end_internal_session("h1", "compression")
    store.record_internal_session("h2", acp, "h1", "compression")
    provenance = build_provenance(store, acp, "h2", previous_internal_id="h1")
    assert provenance == {
        "acpSessionId": acp,
        "currentHermesSessionId": "h2",
        "rootHermesSessionId": "h1",
        "parentHermesSessionId": "h1",
        "sessionKind": "continuation",
        "compressionDepth": 1,
        "previousHermesSessionId": "h1",
        "reason": "compression",
        "creatorKind": "compression",
    }
    assert list(provenance) == [
        "acpSessionId",
        "currentHermesSessionId",
        "rootHermesSessionId",
        "parentHermesSessionId",
        "sessionKind",
        "compressionDepth",
        "previousHermesSessionId",
        "reason",
        "creatorKind",
    ]


def test_depth_three_chain(store: SessionStore, acp: str) -> None:
    store.record_internal_session("h0", acp)
    for i in range(1, 4):
        store.record_internal_session(f"h{i}", acp, f"h{i - 1}", "compression")
    provenance = build_provenance(store, acp, "h3")
    assert provenance is not None
    assert provenance["rootHermesSessionId"] == "h0"
    assert provenance["parentHermesSessionId"] == "h2"
    assert provenance["compressionDepth"] == 3
    assert provenance["sessionKind"] == "continuation"


def test_non_compression_parent_is_root_kind(store: SessionStore, acp: str) -> None:
    store.record_internal_session("h0", acp)
    store.record_internal_session("h1", acp, "h0", "delegate")
    store.record_internal_session("h2", acp, "h1", "delegate")
    store.end_internal_session("h1", "delegated")
    provenance = build_provenance(store, acp, "h2")
    assert provenance is not None
    assert provenance["sessionKind"] == "root"
    assert provenance["parentHermesSessionId"] == "h1"
    assert provenance["rootHermesSessionId"] == "h0"
    assert provenance["compressionDepth"] == 0
    # A compression further up counts toward depth but does not make h2 a continuation.
    store.end_internal_session("h0", "compression")
    again = build_provenance(store, acp, "h2")
    assert again is not None
    assert (again["compressionDepth"], again["sessionKind"]) == (1, "root")


def test_missing_parent_row_stops_the_walk(store: SessionStore, acp: str) -> None:
    store.record_internal_session("h1", acp, "gone", "compression")
    provenance = build_provenance(store, acp, "h1")
    assert provenance is not None
    assert provenance["parentHermesSessionId"] == "gone"
    assert provenance["rootHermesSessionId"] == "h1"
    assert provenance["sessionKind"] == "root"


def test_cycle_terminates(store: SessionStore, acp: str) -> None:
    store.record_internal_session("a", acp, "b", "compression")
    store.record_internal_session("b", acp, "c", "compression")
    store.record_internal_session("c", acp, "a", "compression")
    for internal_id in ("a", "b", "c"):
        store.end_internal_session(internal_id, "compression")
    provenance = build_provenance(store, acp, "a")
    assert provenance is not None
    assert provenance["rootHermesSessionId"] == "c"
    assert provenance["compressionDepth"] == 2
    assert provenance["sessionKind"] == "continuation"


def test_walk_is_capped(store: SessionStore, acp: str) -> None:
    length = MAX_WALK + 20
    store.record_internal_session("n0", acp)
    for i in range(1, length):
        store.record_internal_session(f"n{i}", acp, f"n{i - 1}", "compression")
    provenance = build_provenance(store, acp, f"n{length - 1}")
    assert provenance is not None
    assert provenance["compressionDepth"] == MAX_WALK
    assert provenance["rootHermesSessionId"] == f"n{length - 1 - MAX_WALK}"


def test_unknown_current_gives_none(store: SessionStore, acp: str) -> None:
    assert build_provenance(store, acp, "nope") is None
    assert provenance_meta(store, acp, "nope") is None


def test_meta_wraps_provenance(store: SessionStore, acp: str) -> None:
    store.record_internal_session("h1", acp)
    assert provenance_meta(store, acp, "h1", "h0") == {
        "hermes": {"sessionProvenance": build_provenance(store, acp, "h1", "h0")}
    }


def test_closed_store_gives_none(store: SessionStore, acp: str) -> None:
    store.record_internal_session("h1", acp)
    store.close()
    assert build_provenance(store, acp, "h1") is None
