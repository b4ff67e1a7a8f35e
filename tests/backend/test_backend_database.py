"""A session database that cannot be used: the backend keeps serving from memory and
says so, on the wire and in the log; the damaged file is left for inspection."""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
from pathlib import Path

import anyio
import pytest

from acp_v1 import models as m
from acpwire.agent.embedded.factory import DefaultAgentFactory
from acpwire.rpc import RpcError
from acpwire.server.app import Runtime, check_in_background
from acpwire.server.sessions.manager import SessionManager
from acpwire.store import SessionRecord, SessionStore
from tests.backend.harness import STEP_S, connected, make_settings, workspace_of
from tests.support.fake_llm import FakeLLM

pytestmark = pytest.mark.anyio

GARBAGE = b"this is not a database\x00\xff" * 200


async def test_corrupt_database_keeps_serving_in_memory(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    db = home / "sessions.db"
    db.write_bytes(GARBAGE)
    cwd = str(workspace_of(tmp_path))
    with FakeLLM() as llm, caplog.at_level(logging.ERROR, logger="acpwire.server.app"):
        runtime = Runtime.create(make_settings(home, llm.base_url))
        try:
            assert any("sessions.db" in rec.getMessage() for rec in caplog.records)
            async with connected(runtime) as client:
                editor = client.handler
                with anyio.fail_after(STEP_S):
                    new = await client.peer.session_new(
                        m.NewSessionRequest(cwd=cwd, mcp_servers=[])
                    )
                sid = new.session_id
                await editor.wait_for(lambda: "not being saved" in editor.text(sid))
                assert str(db) in editor.text(sid)
                with anyio.fail_after(STEP_S):
                    result = await client.peer.session_prompt(
                        m.PromptRequest(session_id=sid, prompt=[m.ContentBlockText(text="hi")])
                    )
                assert result.stop_reason == "end_turn"
                assert "You said: hi" in editor.text(sid)
                # The in-memory session can be loaded on this connection.
                with anyio.fail_after(STEP_S):
                    await client.peer.session_load(
                        m.LoadSessionRequest(session_id=sid, cwd=cwd, mcp_servers=[])
                    )
                with anyio.fail_after(STEP_S), pytest.raises(RpcError) as info:
                    await client.peer.session_load(
                        m.LoadSessionRequest(session_id="from-a-past-run", cwd=cwd, mcp_servers=[])
                    )
                assert info.value.code == -32002
                assert "not persisted" in info.value.message
                assert "sessions.db" in info.value.message
        finally:
            runtime.close()
    assert db.read_bytes() == GARBAGE


def _lock(db: Path) -> sqlite3.Connection:
    """Another process's writer holding the database (a real second connection)."""
    holder = sqlite3.connect(db, isolation_level=None, timeout=0)
    holder.execute("BEGIN EXCLUSIVE")
    return holder


async def test_database_locked_during_a_call_answers_a_clear_error_then_recovers(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    cwd = str(workspace_of(tmp_path))
    with FakeLLM() as llm:
        settings = dataclasses.replace(make_settings(home, llm.base_url), db_busy_timeout_ms=200)
        runtime = Runtime.create(settings)
        try:
            async with connected(runtime) as client:
                holder = _lock(home / "sessions.db")
                try:
                    with anyio.fail_after(STEP_S), pytest.raises(RpcError) as info:
                        await client.peer.session_new(m.NewSessionRequest(cwd=cwd, mcp_servers=[]))
                    assert info.value.code == -32603
                    assert "database" in info.value.message.lower()
                    assert "lock" in info.value.message.lower()
                finally:
                    holder.rollback()
                    holder.close()
                # The lock is gone: the same connection serves and persists again.
                with anyio.fail_after(STEP_S):
                    new = await client.peer.session_new(
                        m.NewSessionRequest(cwd=cwd, mcp_servers=[])
                    )
                    await client.peer.session_prompt(
                        m.PromptRequest(
                            session_id=new.session_id, prompt=[m.ContentBlockText(text="hi")]
                        )
                    )
                    listed = await client.peer.session_list(m.ListSessionsRequest())
                assert new.session_id in [s.session_id for s in listed.sessions]
        finally:
            runtime.close()


async def test_a_large_damaged_database_is_reported_after_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "home"
    db = home / "sessions.db"
    with SessionStore(db) as store:
        for i in range(40):
            store.create_session(SessionRecord(id=f"s{i}", cwd="/w"))
            store.append_messages(f"s{i}", [{"role": "user", "content": "x" * 400}] * 5)
    with db.open("r+b") as handle:  # damage the last pages (old messages), not the header
        handle.seek(-4096 * 3, 2)
        handle.write(b"\xa5" * 4096 * 3)
    cwd = str(workspace_of(tmp_path))
    with FakeLLM() as llm:
        settings = make_settings(home, llm.base_url)
        # As if the file were too large to check at open: the runtime checks it later.
        store = SessionStore(db, check_at_open_max_bytes=0)
        factory = DefaultAgentFactory(settings.file_values)
        runtime = Runtime(settings, SessionManager(store, factory), factory)
        try:
            with caplog.at_level(logging.ERROR, logger="acpwire.server.app"):
                thread = check_in_background(runtime.manager)
                assert thread is not None
                thread.join(STEP_S)
            assert any("is damaged" in rec.getMessage() for rec in caplog.records)
            async with connected(runtime) as client:
                editor = client.handler
                with anyio.fail_after(STEP_S):
                    new = await client.peer.session_new(
                        m.NewSessionRequest(cwd=cwd, mcp_servers=[])
                    )
                sid = new.session_id
                await editor.wait_for(lambda: "is damaged" in editor.text(sid))
                assert str(db) in editor.text(sid)
        finally:
            runtime.close()
