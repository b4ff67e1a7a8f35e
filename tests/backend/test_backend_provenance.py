"""Session provenance (``_meta.hermes.sessionProvenance``) on session answers, and the
rotation of the agent's internal id when a turn compresses the context."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_v1 import models as m
from acpwire.render import SUMMARY_NOTE
from acpwire.store import SessionStore
from tests.backend.harness import STEP_S, rig

pytestmark = pytest.mark.anyio


def provenance(meta: dict[str, Any] | None) -> dict[str, Any]:
    assert meta is not None
    found = meta["hermes"]["sessionProvenance"]
    assert isinstance(found, dict)
    return found


async def test_provenance_on_new_load_and_resume(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        with anyio.fail_after(STEP_S):
            new = await r.peer.session_new(
                m.NewSessionRequest(cwd=str(r.workspace), mcp_servers=[])
            )
        sid = new.session_id
        first = provenance(new.meta)
        assert first["acpSessionId"] == sid
        assert first["currentHermesSessionId"] == first["rootHermesSessionId"]
        assert first["currentHermesSessionId"] != sid
        assert (first["sessionKind"], first["compressionDepth"]) == ("root", 0)
        assert first["parentHermesSessionId"] is None
        with anyio.fail_after(STEP_S):
            loaded = await r.peer.session_load(
                m.LoadSessionRequest(session_id=sid, cwd=str(r.workspace), mcp_servers=[])
            )
            resumed = await r.peer.session_resume(
                m.ResumeSessionRequest(session_id=sid, cwd=str(r.workspace))
            )
        assert provenance(loaded.meta) == first
        assert provenance(resumed.meta) == first


async def test_compression_rotates_the_internal_id(tmp_path: Path) -> None:
    # A tiny window: the third turn has more than two turns of history and compresses.
    async with rig(tmp_path, extra={"context_window": 1024}) as r:
        with anyio.fail_after(STEP_S):
            new = await r.peer.session_new(
                m.NewSessionRequest(cwd=str(r.workspace), mcp_servers=[])
            )
        sid = new.session_id
        original = provenance(new.meta)["currentHermesSessionId"]
        for n in range(3):
            result = await r.prompt(sid, f"turn {n}: " + "words " * 40)
            assert result.stop_reason == "end_turn"
        infos = r.editor.of_kind(sid, "session_info_update")
        assert all(u.meta is not None for u in infos)  # every one carries the provenance
        rotations = [u for u in infos if "reason" in provenance(u.meta)]
        assert len(rotations) == 1
        moved = provenance(rotations[0].meta)
        assert moved["acpSessionId"] == sid
        assert moved["previousHermesSessionId"] == original
        assert moved["currentHermesSessionId"] != original
        assert moved["parentHermesSessionId"] == original
        assert moved["rootHermesSessionId"] == original
        assert (moved["reason"], moved["creatorKind"]) == ("compression", "compression")
        assert (moved["sessionKind"], moved["compressionDepth"]) == ("continuation", 1)
        # The answer to a later load reports the new head.
        with anyio.fail_after(STEP_S):
            loaded = await r.peer.session_resume(
                m.ResumeSessionRequest(session_id=sid, cwd=str(r.workspace))
            )
        assert provenance(loaded.meta)["currentHermesSessionId"] == moved["currentHermesSessionId"]
    # Compressed-away messages are archived in the database file, never deleted.
    store = SessionStore(tmp_path / "home" / "sessions.db")
    try:
        everything = store.full_history(sid, include_archived=True)
        live = store.live_history(sid)
    finally:
        store.close()
    texts = [str(x.get("content")) for x in everything]
    for n in range(3):
        assert any(t.startswith(f"turn {n}: ") for t in texts)
    assert len(live) < len(everything)
    assert not any(str(x.get("content")).startswith("turn 0: ") for x in live)


async def test_load_after_compression_shows_the_summary_as_a_note(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        sid = await r.new()
        for n in range(3):
            await r.prompt(sid, f"turn {n}")
        await r.prompt(sid, "/compact")
        with anyio.fail_after(STEP_S):
            await r.peer.session_load(
                m.LoadSessionRequest(session_id=sid, cwd=str(r.workspace), mcp_servers=[])
            )
        replayed_users = [u.content.text for u in r.editor.of_kind(sid, "user_message_chunk")]
        assert not any(text.startswith("[Summary") for text in replayed_users)
        assert any(
            u.content.text.startswith(SUMMARY_NOTE)
            for u in r.editor.of_kind(sid, "agent_message_chunk")
        )


async def test_title_updates_carry_the_provenance(tmp_path: Path) -> None:
    """Every ``session_info_update`` has the provenance in ``_meta``, as hermes-acp sends
    it: the title set by the first prompt, and the title sent on a later load."""
    async with rig(tmp_path) as r:
        with anyio.fail_after(STEP_S):
            new = await r.peer.session_new(
                m.NewSessionRequest(cwd=str(r.workspace), mcp_servers=[])
            )
        sid = new.session_id
        await r.prompt(sid, "name this thread")
        with anyio.fail_after(STEP_S):
            await r.peer.session_load(
                m.LoadSessionRequest(session_id=sid, cwd=str(r.workspace), mcp_servers=[])
            )
            await r.editor.wait_for(lambda: len(r.editor.of_kind(sid, "session_info_update")) >= 2)
        infos = r.editor.of_kind(sid, "session_info_update")
        assert [i.title for i in infos] == ["name this thread", "name this thread"]
        assert all(provenance(i.meta) == provenance(new.meta) for i in infos)
