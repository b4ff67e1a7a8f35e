"""Modes and config options (validated, announced, persisted) and the errors for unknown
sessions and relative paths: never ``{}``, never a silently created session."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_v1 import models as m
from acp_v1.peers import AgentPeer
from acpwire.rpc import RpcError
from acpwire.server.app import Runtime
from tests.backend.harness import STEP_S, connected, make_settings, rig

pytestmark = pytest.mark.anyio


async def expect_error(code: int, call: Awaitable[Any]) -> str:
    with anyio.fail_after(STEP_S), pytest.raises(RpcError) as info:
        await call
    assert info.value.code == code, info.value
    return info.value.message


def set_option(sid: str, config_id: str, value: str) -> m.SetSessionConfigOptionRequestValueId:
    return m.SetSessionConfigOptionRequestValueId(session_id=sid, config_id=config_id, value=value)


async def test_set_mode_is_validated_announced_and_persisted(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        sid = await r.new()
        message = await expect_error(
            -32602, r.peer.session_set_mode(m.SetSessionModeRequest(session_id=sid, mode_id="yolo"))
        )
        assert "yolo" in message and "accept_edits" in message
        assert r.editor.of_kind(sid, "current_mode_update") == []
        await r.set_mode(sid, "accept_edits")
        (mode,) = r.editor.of_kind(sid, "current_mode_update")
        assert mode.current_mode_id == "accept_edits"
        (config,) = r.editor.of_kind(sid, "config_option_update")
        assert {o.id: o.current_value for o in config.config_options}["mode"] == "accept_edits"
        # A restart keeps the mode.
        runtime = Runtime.create(make_settings(tmp_path / "home", r.llm.base_url))
        try:
            async with connected(runtime) as client:
                with anyio.fail_after(STEP_S):
                    loaded = await client.peer.session_load(
                        m.LoadSessionRequest(session_id=sid, cwd=str(r.workspace), mcp_servers=[])
                    )
                assert loaded.modes is not None
                assert loaded.modes.current_mode_id == "accept_edits"
                options = {o.id: o.current_value for o in loaded.config_options or []}
                assert options["mode"] == "accept_edits"
        finally:
            runtime.close()


async def test_set_config_option(tmp_path: Path) -> None:
    async with rig(tmp_path, models=["fake-model", "big-model"]) as r:
        with anyio.fail_after(STEP_S):
            new = await r.peer.session_new(
                m.NewSessionRequest(cwd=str(r.workspace), mcp_servers=[])
            )
        sid = new.session_id
        initial = {o.id: o for o in new.config_options or []}
        assert set(initial) == {"model", "mode", "reasoning_effort"}
        assert {o.id: o.category for o in initial.values()} == {
            "model": "model",
            "mode": "mode",
            "reasoning_effort": "thought_level",
        }
        for config_id, value in (
            ("model", "big-model"),
            ("mode", "dont_ask"),
            ("reasoning_effort", "high"),
        ):
            with anyio.fail_after(STEP_S):
                answer = await r.peer.session_set_config_option(set_option(sid, config_id, value))
            current = {o.id: o.current_value for o in answer.config_options}
            assert set(current) == {"model", "mode", "reasoning_effort"}
            assert current[config_id] == value
        assert [u.current_mode_id for u in r.editor.of_kind(sid, "current_mode_update")] == [
            "dont_ask"
        ]
        assert len(r.editor.of_kind(sid, "config_option_update")) == 3
        await r.prompt(sid, "hi")
        assert r.llm.requests[-1]["model"] == "big-model"
        for config_id, value in (
            ("colour", "red"),
            ("model", "no-such-model"),
            ("reasoning_effort", "extreme"),
        ):
            await expect_error(
                -32602, r.peer.session_set_config_option(set_option(sid, config_id, value))
            )
        boolean = m.SetSessionConfigOptionRequestBoolean(
            session_id=sid, config_id="mode", value=True, type="boolean"
        )
        await expect_error(-32602, r.peer.session_set_config_option(boolean))
        # Every choice survives a restart.
        runtime = Runtime.create(make_settings(tmp_path / "home", r.llm.base_url))
        try:
            async with connected(runtime) as client:
                with anyio.fail_after(STEP_S):
                    loaded = await client.peer.session_resume(
                        m.ResumeSessionRequest(session_id=sid, cwd=str(r.workspace))
                    )
                current = {o.id: o.current_value for o in loaded.config_options or []}
                assert current == {
                    "model": "big-model",
                    "mode": "dont_ask",
                    "reasoning_effort": "high",
                }
        finally:
            runtime.close()


def unknown_id_calls(peer: AgentPeer, cwd: str) -> dict[str, Callable[[], Awaitable[Any]]]:
    ghost = "00000000-0000-4000-8000-000000000000"
    return {
        "load": lambda: peer.session_load(
            m.LoadSessionRequest(session_id=ghost, cwd=cwd, mcp_servers=[])
        ),
        "resume": lambda: peer.session_resume(m.ResumeSessionRequest(session_id=ghost, cwd=cwd)),
        "fork": lambda: peer.session_fork(
            m.ForkSessionRequest(session_id=ghost, cwd=cwd, mcp_servers=[])
        ),
        "close": lambda: peer.session_close(m.CloseSessionRequest(session_id=ghost)),
        "delete": lambda: peer.session_delete(m.DeleteSessionRequest(session_id=ghost)),
        "prompt": lambda: peer.session_prompt(
            m.PromptRequest(session_id=ghost, prompt=[m.ContentBlockText(text="hi")])
        ),
        "set_mode": lambda: peer.session_set_mode(
            m.SetSessionModeRequest(session_id=ghost, mode_id="default")
        ),
        "set_config_option": lambda: peer.session_set_config_option(
            set_option(ghost, "mode", "default")
        ),
    }


async def test_unknown_session_ids_are_resource_not_found(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        for name, call in unknown_id_calls(r.peer, str(r.workspace)).items():
            message = await expect_error(-32002, call())
            assert "not found" in message, name
        with anyio.fail_after(STEP_S):
            listed = await r.peer.session_list(m.ListSessionsRequest())
        assert listed.sessions == []
        assert r.llm.requests == []


async def test_relative_cwd_is_invalid_params(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        sid = await r.new()
        for call in (
            r.peer.session_new(m.NewSessionRequest(cwd="work", mcp_servers=[])),
            r.peer.session_load(m.LoadSessionRequest(session_id=sid, cwd="./x", mcp_servers=[])),
            r.peer.session_resume(m.ResumeSessionRequest(session_id=sid, cwd="x/y")),
            r.peer.session_fork(m.ForkSessionRequest(session_id=sid, cwd="..", mcp_servers=[])),
            r.peer.session_list(m.ListSessionsRequest(cwd="relative")),
        ):
            assert "absolute" in await expect_error(-32602, call)
        await r.prompt(sid, "hello")
        with anyio.fail_after(STEP_S):
            listed = await r.peer.session_list(m.ListSessionsRequest())
        assert [(s.session_id, s.cwd) for s in listed.sessions] == [(sid, str(r.workspace))]


async def test_reasoning_effort_reaches_the_model(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        sid = await r.new()
        with anyio.fail_after(STEP_S):
            await r.peer.session_set_config_option(set_option(sid, "reasoning_effort", "high"))
        await r.prompt(sid, "think hard")
        assert r.llm.requests[-1].get("reasoning_effort") == "high"


async def test_retired_session_set_model_still_switches_the_model(tmp_path: Path) -> None:
    """``session/set_model`` left the protocol, but JetBrains 2025.3 sends it after
    ``session/new`` and breaks on -32601: it sets the model, and bad input is -32602."""
    async with rig(tmp_path, models=["fake-model", "big-model"]) as r:
        sid = await r.new()
        wire = r.connection.connection
        with anyio.fail_after(STEP_S):
            answer = await wire.request(
                "session/set_model", {"sessionId": sid, "modelId": "big-model"}
            )
        assert answer == {}
        (update,) = r.editor.of_kind(sid, "config_option_update")
        assert {o.id: o.current_value for o in update.config_options}["model"] == "big-model"
        await r.prompt(sid, "hi")
        assert r.llm.requests[-1]["model"] == "big-model"
        for params in (
            {"sessionId": sid, "modelId": "no-such-model"},
            {"sessionId": sid},
            {"modelId": "big-model"},
            [sid, "big-model"],
        ):
            await expect_error(-32602, wire.request("session/set_model", params))
        await expect_error(
            -32002, wire.request("session/set_model", {"sessionId": "nope", "modelId": "big-model"})
        )
        await expect_error(-32601, wire.request("session/set_models", {"sessionId": sid}))
        assert (await r.prompt(sid, "still fine")).stop_reason == "end_turn"


async def test_hermes_acp_edit_approval_policy_maps_onto_the_mode(tmp_path: Path) -> None:
    """hermes-acp's (unadvertised) ``edit_approval_policy`` still works for clients that
    were scripted against it: it sets the session mode."""
    async with rig(tmp_path) as r:
        sid = await r.new()
        for value, mode in (
            ("workspace_session", "accept_edits"),
            ("session", "dont_ask"),
            ("ask", "default"),
        ):
            with anyio.fail_after(STEP_S):
                answer = await r.peer.session_set_config_option(
                    set_option(sid, "edit_approval_policy", value)
                )
            assert {o.id: o.current_value for o in answer.config_options}["mode"] == mode
            assert r.editor.of_kind(sid, "current_mode_update")[-1].current_mode_id == mode
        await expect_error(
            -32602, r.peer.session_set_config_option(set_option(sid, "edit_approval_policy", "x"))
        )
