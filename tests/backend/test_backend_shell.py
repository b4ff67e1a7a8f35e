"""Dangerous shell commands through ``session/request_permission``: the options offered,
session and workspace grants (``/approvals``), and a terminal ``tool_call_update`` for
every call, also unknown tools, malformed arguments and calls cut off by a cancel."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_v1 import models as m
from acpwire.sandbox import sandbox_status
from tests.backend.harness import STEP_S, TERMINAL_CAPS, Rig, rig, tool_call, tool_texts

pytestmark = pytest.mark.anyio

DANGEROUS = "rm -rf ./junk"


async def command_turn(r: Rig, sid: str, command: str, call_id: str) -> m.PromptResponse:
    r.llm.push(tool_call(call_id, "terminal", command=command))
    r.llm.push({"text": "ok"})
    return await r.prompt(sid, "run it")


def terminal_updates(r: Rig, sid: str) -> dict[str, str]:
    """call id -> terminal status, failing on a call that ended twice."""
    ends: dict[str, str] = {}
    for u in r.editor.of_kind(sid, "tool_call_update"):
        if u.status in ("completed", "failed"):
            assert u.tool_call_id not in ends, f"{u.tool_call_id} ended twice"
            ends[u.tool_call_id] = u.status
    return ends


def started(r: Rig, sid: str) -> set[str]:
    return {u.tool_call_id for u in r.editor.of_kind(sid, "tool_call")}


def last_messages(r: Rig, sid: str, count: int) -> list[str]:
    chunks = r.editor.of_kind(sid, "agent_message_chunk")
    return [c.content.text for c in chunks[-count:]]


async def test_dangerous_command_offers_every_option(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        r.editor.policy.answer = "deny"
        (r.workspace / "junk").mkdir()
        sid = await r.new()
        await command_turn(r, sid, DANGEROUS, "t1")
        (request,) = r.editor.policy.requests
        offered = {o.option_id: o.kind for o in request.options}
        assert offered == {
            "allow_once": "allow_once",
            "allow_session": "allow_always",
            "allow_always": "allow_always",
            "deny": "reject_once",
            "deny_always": "reject_always",
        }
        assert request.tool_call.kind == "execute"
        assert request.tool_call.raw_input == {"command": DANGEROUS, "reason": "recursive delete"}
        assert (r.workspace / "junk").is_dir()
        assert terminal_updates(r, sid) == {"t1": "failed"}


async def test_a_client_keying_options_by_kind_gets_one_option_per_kind(tmp_path: Path) -> None:
    """CodeCompanion labels permission options by kind: the session grant stays, the
    workspace-wide one (same kind) is not offered, nor ``deny_always`` (not shown)."""
    async with rig(tmp_path, client_name="CodeCompanion.nvim") as r:
        r.editor.policy.answer = "allow_session"
        (r.workspace / "junk").mkdir()
        sid = await r.new()
        await command_turn(r, sid, DANGEROUS, "t1")
        (request,) = r.editor.policy.requests
        assert [(o.option_id, str(o.kind)) for o in request.options] == [
            ("allow_once", "allow_once"),
            ("allow_session", "allow_always"),
            ("deny", "reject_once"),
        ]
        assert not (r.workspace / "junk").exists()


async def test_harmless_command_runs_without_asking(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        sid = await r.new()
        await command_turn(r, sid, "echo hello-there", "t1")
        assert r.editor.policy.requests == []
        (end,) = [u for u in r.editor.of_kind(sid, "tool_call_update") if u.status]
        assert end.status == "completed"
        assert "hello-there" in str(end.content)


async def test_allow_session_grant_stays_in_its_session(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        r.editor.policy.answer = "allow_session"
        first = await r.new()
        for call_id in ("t1", "t2"):
            (r.workspace / "junk").mkdir(exist_ok=True)
            await command_turn(r, first, DANGEROUS, call_id)
            assert not (r.workspace / "junk").exists()
        assert len(r.editor.policy.requests) == 1
        second = await r.new()
        r.editor.policy.answer = "deny"
        (r.workspace / "junk").mkdir()
        await command_turn(r, second, DANGEROUS, "t3")
        assert len(r.editor.policy.requests) == 2
        assert (r.workspace / "junk").is_dir()


async def test_allow_always_is_persisted_listed_and_revocable(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        r.editor.policy.answer = "allow_always"
        first = await r.new()
        (r.workspace / "junk").mkdir()
        await command_turn(r, first, DANGEROUS, "t1")
        assert not (r.workspace / "junk").exists()
        second = await r.new()
        await r.prompt(second, "/approvals")
        (listing,) = last_messages(r, second, 1)
        assert str(r.workspace) in listing and f"- allow: `{DANGEROUS}`" in listing
        # The grant works in the new session without asking.
        (r.workspace / "junk").mkdir()
        await command_turn(r, second, DANGEROUS, "t2")
        assert len(r.editor.policy.requests) == 1
        assert not (r.workspace / "junk").exists()
        await r.prompt(second, f"/approvals revoke {DANGEROUS}")
        assert "Revoked" in last_messages(r, second, 1)[0]
        await r.prompt(second, "/approvals")
        assert "(none)" in last_messages(r, second, 1)[0]
        r.editor.policy.answer = "deny"
        (r.workspace / "junk").mkdir()
        await command_turn(r, second, DANGEROUS, "t3")
        assert len(r.editor.policy.requests) == 2
        assert (r.workspace / "junk").is_dir()


async def test_deny_always_refuses_without_asking_again(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        r.editor.policy.answer = "deny_always"
        sid = await r.new()
        (r.workspace / "junk").mkdir()
        await command_turn(r, sid, DANGEROUS, "t1")
        await command_turn(r, await r.new(), DANGEROUS, "t2")
        assert len(r.editor.policy.requests) == 1
        assert (r.workspace / "junk").is_dir()
        await r.prompt(sid, "/approvals")
        assert f"- deny: `{DANGEROUS}`" in last_messages(r, sid, 1)[0]


async def test_every_call_ends_unknown_and_malformed_included(tmp_path: Path) -> None:
    batch: dict[str, Any] = {
        "tool_calls": [
            {"id": "u1", "name": "no_such_tool", "arguments": {"x": 1}},
            {"id": "u2", "name": "read_file", "arguments": "{not json"},
            {"id": "u3", "name": "read_file", "arguments": {"path": "missing.txt"}},
            {"id": "u4", "name": "read_file", "arguments": {"wrong": "arg"}},
        ]
    }
    async with rig(tmp_path, [batch, {"text": "done"}]) as r:
        sid = await r.new()
        assert (await r.prompt(sid, "go")).stop_reason == "end_turn"
        assert started(r, sid) == {"u1", "u2", "u3", "u4"}
        assert terminal_updates(r, sid) == dict.fromkeys(("u1", "u2", "u3", "u4"), "failed")


async def test_cancel_mid_tool_ends_the_call(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        sid = await r.new()
        r.llm.push(tool_call("s1", "terminal", command="sleep 30"))
        answers: list[m.PromptResponse] = []

        async def run() -> None:
            answers.append(await r.prompt(sid, "wait"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await r.editor.wait_for(lambda: "s1" in started(r, sid))
            with anyio.fail_after(STEP_S):
                await r.cancel(sid)
        assert answers[0].stop_reason == "cancelled"
        assert terminal_updates(r, sid) == {"s1": "failed"}
        # The session is usable right away.
        assert (await r.prompt(sid, "next")).stop_reason == "end_turn"
        assert "You said: next" in r.editor.text(sid)


async def test_commands_run_in_the_editor_terminal_when_advertised(tmp_path: Path) -> None:
    async with rig(tmp_path, caps=TERMINAL_CAPS) as r:
        sid = await r.new()
        await command_turn(r, sid, "echo from-the-editor; exit 3", "t1")
        (terminal,) = r.editor.terminals.values()
        assert terminal.request.cwd == str(r.workspace)
        # The editor runs the planned command line: bubblewrap (where it works), env -i
        # with the scrubbed environment, bash.
        args = [terminal.request.command, *(terminal.request.args or [])]
        if sandbox_status().available:
            assert os.path.basename(args[0]) == "bwrap" and "--unshare-all" in args
            args = args[args.index("--") + 1 :]
        assert args[:2] == ["env", "-i"]
        assert args[-3:] == ["bash", "-c", "echo from-the-editor; exit 3"]
        assert terminal.released
        embedded = [
            c
            for u in r.editor.of_kind(sid, "tool_call_update")
            for c in u.content or []
            if isinstance(c, m.ToolCallContentTerminal)
        ]
        assert [c.terminal_id for c in embedded] == ["term-1"]
        assert terminal_updates(r, sid) == {"t1": "failed"}  # exit code 3
        tool_result = r.llm.requests[-1]["messages"][-1]["content"]
        assert "from-the-editor" in tool_result and '"exit_code": 3' in tool_result


async def test_cancel_kills_the_editor_terminal(tmp_path: Path) -> None:
    async with rig(tmp_path, caps=TERMINAL_CAPS) as r:
        sid = await r.new()
        r.llm.push(tool_call("s1", "terminal", command="sleep 30"))
        answers: list[m.PromptResponse] = []

        async def run() -> None:
            answers.append(await r.prompt(sid, "wait"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await r.editor.wait_for(lambda: bool(r.editor.terminals))
            await r.cancel(sid)
        assert answers[0].stop_reason == "cancelled"
        (terminal,) = r.editor.terminals.values()
        assert terminal.killed and terminal.released
        assert terminal.process.returncode is not None
        assert terminal_updates(r, sid) == {"s1": "failed"}
        # Reported as interrupted, not with the timeout's exit code 124.
        shown = tool_texts(r.editor.of_kind(sid, "tool_call_update")[-1].content)
        assert "interrupted" in shown and "124" not in shown
        state = r.runtime.manager.peek(sid)
        assert state is not None
        (result,) = [h for h in state.history if h.get("role") == "tool"]
        assert json.loads(str(result["content"]))["exit_code"] != 124
