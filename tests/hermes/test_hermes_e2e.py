"""acpwire serving the real Hermes ``AIAgent`` (hermes-agent 0.19.0), end to end.

Opt-in: runs only where a Python with hermes-agent and this acpwire exists (see
:func:`tests.hermes.hermes_rig.hermes_python`); skipped with the reason otherwise. Each
test starts ``python -m acpwire`` with ``ACPWIRE_AGENT=hermes`` in a process cwd other
than the session's (so relative paths must be resolved against the session), against
the loopback model server, and talks ACP to it over its stdio.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_v1 import models as m
from acpwire.rpc import RpcError
from bench.model_server import BenchModelServer
from tests.hermes.hermes_rig import (
    STEP_S,
    backend,
    hermes_env,
    model_server,
    new_session,
    rig_dirs,
    text_prompt,
    tool_call,
    tool_statuses,
)

pytestmark = [pytest.mark.subprocess, pytest.mark.timeout(240)]


TODOS = [
    {"id": "1", "content": "write hello", "status": "in_progress"},
    {"id": "2", "content": "obsolete step", "status": "cancelled"},
]
V4A = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-beta\n+gamma\n*** End Patch\n"


RULES: list[dict[str, Any]] = [
    {"match": "greet", "reasoning": "A greeting.", "text": "Hi there, friend!", "usage": {"prompt_tokens": 11, "completion_tokens": 7}},
    {"match": "PLAN", "times": 1, "text": "Planning.", "tool_calls": [tool_call("call_todo", "todo", todos=TODOS)]},
    {"match": "PLAN", "times": 1, "tool_calls": [tool_call("call_write", "write_file", path="hello.txt", content="hi from hermes\n")]},
    {"match": "PLAN", "times": 1, "tool_calls": [tool_call("call_patch", "patch", path="notes.txt", old_string="alpha", new_string="beta")]},
    {"match": "PLAN", "times": 1, "tool_calls": [tool_call("call_v4a", "patch", mode="patch", patch=V4A)]},
    {"match": "PLAN", "times": 1, "text": "All done."},
    {"match": "DANGER", "times": 1, "tool_calls": [tool_call("call_rm", "terminal", command="rm -rf ./junk_dir")]},
    {"match": "DANGER", "times": 1, "text": "I left it alone."},
    {"match": "SLOW", "times": 1, "text": "slow " * 60, "chunks": 60, "delay": 0.2},
    {"match": "SLEEPY", "times": 1, "tool_calls": [tool_call("call_sleep", "terminal", command="sleep 60")]},
]  # fmt: skip


@pytest.fixture
def llm() -> Iterator[BenchModelServer]:
    with model_server(RULES) as server:
        yield server


@pytest.fixture
def dirs(tmp_path: Path) -> dict[str, Path]:
    paths = rig_dirs(tmp_path)
    (paths["work"] / "junk_dir").mkdir()
    (paths["work"] / "notes.txt").write_text("alpha\n")
    return paths


def _diffs(request: m.RequestPermissionRequest) -> list[tuple[str, str | None, str]]:
    return [
        (c.path, c.old_text, c.new_text)
        for c in request.tool_call.content or []
        if isinstance(c, m.ToolCallContentDiff)
    ]


@pytest.mark.anyio
async def test_conversation_tools_approvals_commands_and_replay(
    hermes_py: str, llm: BenchModelServer, dirs: dict[str, Path]
) -> None:
    env = hermes_env(dirs["hermes"], dirs["acpwire"], llm.base_url)
    work, log = dirs["work"], dirs["acpwire"] / "stderr.log"
    async with backend(hermes_py, env, cwd=dirs["launch"], log=log) as link:
        ed = link.handler
        sid = await new_session(link, work)

        def usage() -> list[m.SessionUpdateUsageUpdate]:
            return ed.of(sid, m.SessionUpdateUsageUpdate)

        with anyio.fail_after(STEP_S):
            await ed.wait_until(lambda: bool(usage()))
        # Hermes' window, and a used figure that counts its system prompt and tools.
        assert usage()[0].size == 131_072 and usage()[0].used > 1000

        with anyio.fail_after(STEP_S):
            done = await link.peer.session_prompt(text_prompt(sid, "greet me"))
        assert done.stop_reason == "end_turn"
        assert done.usage is not None
        assert (done.usage.input_tokens, done.usage.output_tokens) == (11, 7)
        assert ed.text(sid) == "Hi there, friend!"
        assert ed.text(sid, m.SessionUpdateAgentThoughtChunk) == "A greeting."
        body = llm.requests[-1]
        assert body["model"] == "bench-model" and body["stream"] is True
        system = str(body["messages"][0]["content"])
        assert f"Current working directory: {work}" in system  # the session's, not the process'
        assert {"todo", "write_file", "patch", "terminal"} <= {
            t["function"]["name"] for t in body["tools"]
        }

        with anyio.fail_after(STEP_S):
            done = await link.peer.session_prompt(text_prompt(sid, "PLAN the work"))
        assert done.stop_reason == "end_turn"
        calls = tool_statuses(ed, sid)
        for call_id in ("call_todo", "call_write", "call_patch", "call_v4a"):
            assert calls[call_id][-1] == "completed", (call_id, calls[call_id])
            assert calls[call_id].count("completed") == 1
        plans = ed.of(sid, m.SessionUpdatePlan)
        assert [(e.content, e.status) for e in plans[-1].entries] == [
            ("write hello", "in_progress"),
            ("[cancelled] obsolete step", "completed"),
        ]
        edits = [r for r in ed.permissions if r.tool_call.kind == "edit"]
        assert [r.tool_call.tool_call_id for r in edits] == ["call_write", "call_patch", "call_v4a"]
        assert [_diffs(r) for r in edits] == [
            [(str(work / "hello.txt"), None, "hi from hermes\n")],
            [(str(work / "notes.txt"), "alpha\n", "beta\n")],
            [(str(work / "notes.txt"), "beta\n", "gamma\n")],
        ]
        assert (work / "hello.txt").read_text() == "hi from hermes\n"
        assert (work / "notes.txt").read_text() == "gamma\n"
        assert not (dirs["launch"] / "hello.txt").exists()

        ed.answers["rm -rf"] = "deny"
        with anyio.fail_after(STEP_S):
            done = await link.peer.session_prompt(text_prompt(sid, "DANGER: clean up"))
        assert done.stop_reason == "end_turn"
        (asked,) = [r for r in ed.permissions if r.tool_call.kind == "execute"]
        assert "rm -rf ./junk_dir" in (asked.tool_call.title or "")
        assert asked.tool_call.tool_call_id == "call_rm"
        assert tool_statuses(ed, sid)["call_rm"][-1] == "failed"
        assert (work / "junk_dir").is_dir()

        with anyio.fail_after(STEP_S):
            await link.peer.session_prompt(text_prompt(sid, "/context"))
            assert "/ 131072 tokens" in ed.text(sid)
            # Hermes' own trigger (hermes-agent 0.19.0: 0.75 of a 131072-token window),
            # not the embedded agent's 0.8.
            assert "Compression threshold: ~98304 tokens" in ed.text(sid)
            await link.peer.session_prompt(text_prompt(sid, "/compact"))
            assert "Context compressed: " in ed.text(sid)
            # Hermes' provider:model syntax; the next request goes to the new model.
            await link.peer.session_prompt(text_prompt(sid, "/model custom:switched-model"))
            assert ed.text(sid).endswith("Model switched to: switched-model\n\nProvider: custom")
            await link.peer.session_prompt(text_prompt(sid, "greet the new model"))
            assert llm.requests[-1]["model"] == "switched-model"

    async with backend(hermes_py, env, cwd=dirs["launch"], log=log) as link:
        ed = link.handler
        with anyio.fail_after(STEP_S):
            await link.peer.session_load(
                m.LoadSessionRequest(session_id=sid, cwd=str(work), mcp_servers=[])
            )
        replayed = tool_statuses(ed, sid)
        assert replayed["call_rm"] == ["in_progress", "failed"]
        assert ed.of(sid, m.SessionUpdateUserMessageChunk)  # the conversation came back
        with anyio.fail_after(STEP_S):
            done = await link.peer.session_prompt(text_prompt(sid, "greet again"))
        assert done.stop_reason == "end_turn"
        assert ed.text(sid).endswith("Hi there, friend!")


@pytest.mark.anyio
async def test_cancel_stops_replies_and_commands_and_never_sticks(
    hermes_py: str, llm: BenchModelServer, dirs: dict[str, Path]
) -> None:
    env = hermes_env(dirs["hermes"], dirs["acpwire"], llm.base_url)
    log = dirs["acpwire"] / "stderr.log"
    async with backend(hermes_py, env, cwd=dirs["launch"], log=log) as link:
        ed = link.handler
        sid = await new_session(link, dirs["work"])
        cancel = m.CancelNotification(session_id=sid)
        results: list[m.PromptResponse] = []

        async def prompt(text: str) -> None:
            results.append(await link.peer.session_prompt(text_prompt(sid, text)))

        def last_stop() -> m.StopReason:  # a call: mypy keeps no narrowing across turns
            return results[-1].stop_reason

        with anyio.fail_after(STEP_S):
            await link.peer.session_cancel(cancel)  # idle: must not poison the next turn
            await prompt("greet me")
            assert last_stop() == "end_turn"

            async with anyio.create_task_group() as tg:
                tg.start_soon(prompt, "SLOW reply please")
                await ed.wait_until(lambda: "slow" in ed.text(sid))
                await link.peer.session_cancel(cancel)
            assert last_stop() == "cancelled"

            async with anyio.create_task_group() as tg:
                tg.start_soon(prompt, "SLEEPY command")
                await ed.wait_until(lambda: "call_sleep" in tool_statuses(ed, sid))
                await link.peer.session_cancel(cancel)
            assert last_stop() == "cancelled"
            assert tool_statuses(ed, sid)["call_sleep"][-1] == "failed"

            before = ed.text(sid)
            await prompt("greet me again")
            assert last_stop() == "end_turn"
            assert ed.text(sid)[len(before) :].endswith("Hi there, friend!")


@pytest.mark.anyio
async def test_without_a_hermes_provider_new_sessions_need_authentication(
    hermes_py: str,
    dirs: dict[str, Path],
) -> None:
    env = hermes_env(dirs["hermes"], dirs["acpwire"], None)
    async with backend(hermes_py, env, cwd=dirs["launch"], log=dirs["acpwire"] / "err") as link:
        with anyio.fail_after(STEP_S), pytest.raises(RpcError) as caught:
            await link.peer.session_new(m.NewSessionRequest(cwd=str(dirs["work"]), mcp_servers=[]))
    assert caught.value.code == -32000
    assert "hermes model" in caught.value.message


SMART_RULES: list[dict[str, Any]] = [
    {"match": "SMART", "times": 1, "tool_calls": [tool_call("call_rm1", "terminal", command="rm -rf ./junk_dir")]},
    {"match": "SMART", "times": 1, "text": "First try."},
]  # fmt: skip


@pytest.mark.anyio
async def test_hermes_smart_approval_removes_no_ask(hermes_py: str, dirs: dict[str, Path]) -> None:
    """Hermes' smart approval (its auxiliary model answers APPROVE) would run a flagged
    command unasked; behind acpwire's boundary Hermes' policy only adds asks, so the
    editor is still asked, and its "deny" stands."""
    with model_server(SMART_RULES, aux_text="APPROVE") as llm:
        smart = "approvals:\n  mode: smart\n"
        env = hermes_env(dirs["hermes"], dirs["acpwire"], llm.base_url, config=smart)
        log = dirs["acpwire"] / "err"
        async with backend(hermes_py, env, cwd=dirs["launch"], log=log) as link:
            ed = link.handler
            ed.answers["rm -rf"] = "deny"
            sid = await new_session(link, dirs["work"])
            with anyio.fail_after(STEP_S):
                done = await link.peer.session_prompt(text_prompt(sid, "SMART cleanup"))
            assert done.stop_reason == "end_turn"
            (asked,) = ed.permissions
            assert "rm -rf ./junk_dir" in (asked.tool_call.title or "")
            assert (dirs["work"] / "junk_dir").is_dir()
            assert tool_statuses(ed, sid)["call_rm1"][-1] == "failed"
