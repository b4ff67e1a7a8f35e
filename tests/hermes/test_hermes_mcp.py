"""The editor's MCP servers offered to the real Hermes agent (hermes-agent 0.19.0).

Opt-in like the other end-to-end tests (:func:`tests.hermes.hermes_rig.hermes_python`).
Two sessions name the same MCP server (the echo server of ``tests/mcp``) with different
prefixes: each session's model sees the server's tools and each call reaches that
session's own server; a session without servers sees none of them; closing one session
leaves the other's tools working, and a later session can offer them again. Cancelling
a turn releases a tool call that is waiting for its server.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_v1 import models as m
from bench.model_server import BenchModelServer
from tests.hermes.hermes_rig import (
    STEP_S,
    Editor,
    backend,
    hermes_env,
    model_server,
    new_session,
    rig_dirs,
    text_prompt,
    tool_call,
)
from tests.mcp.support import echo_entry

pytestmark = [pytest.mark.subprocess, pytest.mark.timeout(240)]


def _echo_then_answer(tag: str, text: str) -> list[dict[str, Any]]:
    call = tool_call(f"call_{tag}", "echo__echo", text=text)
    return [
        {"match": f"ECHO {tag}", "times": 1, "tool_calls": [call]},
        {"match": f"ECHO {tag}", "times": 1, "text": f"echoed {tag}"},
    ]


RULES = [
    *_echo_then_answer("a1", "ping"),
    *_echo_then_answer("b1", "pong"),
    *_echo_then_answer("b2", "again"),
    *_echo_then_answer("d1", "back"),
    {"match": "hello", "text": "Hello."},
    {"match": "BLOCK", "times": 1, "tool_calls": [tool_call("call_block", "echo__block")]},
    {"match": "BLOCK", "text": "Stopped."},
]  # fmt: skip


@pytest.fixture
def llm() -> Iterator[BenchModelServer]:
    with model_server(RULES) as server:
        yield server


def _tool_names(body: dict[str, Any]) -> set[str]:
    return {str(t["function"]["name"]) for t in body.get("tools") or []}


def _tool_result(body: dict[str, Any], call_id: str) -> str:
    (message,) = [
        msg
        for msg in body["messages"]
        if msg.get("role") == "tool" and msg.get("tool_call_id") == call_id
    ]
    return str(message["content"])


def _statuses(editor: Editor, session: str, call_id: str) -> list[str]:
    return [
        str(n.update.status)
        for n in editor.updates[session]
        if isinstance(n.update, m.SessionUpdateToolCall | m.SessionUpdateToolCallUpdate)
        and n.update.tool_call_id == call_id
        and n.update.status is not None
    ]


@pytest.mark.anyio
async def test_each_session_calls_its_own_mcp_servers(
    hermes_py: str, llm: BenchModelServer, tmp_path: Path
) -> None:
    dirs = rig_dirs(tmp_path)
    env = hermes_env(dirs["hermes"], dirs["acpwire"], llm.base_url)
    work = str(dirs["work"])
    async with backend(hermes_py, env, cwd=dirs["launch"], log=dirs["acpwire"] / "err.log") as link:
        ed, peer = link.handler, link.peer

        async def new(*servers: m.McpServerStdio) -> str:
            return await new_session(link, work, servers)

        async def prompt(session: str, text: str) -> dict[str, Any]:
            with anyio.fail_after(STEP_S):
                done = await peer.session_prompt(text_prompt(session, text))
            assert done.stop_reason == "end_turn"
            return llm.requests[-1]

        a = await new(echo_entry(ECHO_PREFIX="A:"))
        b = await new(echo_entry(ECHO_PREFIX="B:"))
        plain = await new()

        body = await prompt(a, "ECHO a1")
        assert "echo__echo" in _tool_names(body)
        assert _tool_result(body, "call_a1") == "A:ping"
        assert _statuses(ed, a, "call_a1")[-1] == "completed"

        body = await prompt(b, "ECHO b1")
        assert _tool_result(body, "call_b1") == "B:pong"

        body = await prompt(plain, "hello")
        assert "echo__echo" not in _tool_names(body)
        assert {"terminal", "write_file"} <= _tool_names(body)  # Hermes' own tools stay

        with anyio.fail_after(STEP_S):
            await peer.session_close(m.CloseSessionRequest(session_id=a))
        body = await prompt(b, "ECHO b2")
        assert _tool_result(body, "call_b2") == "B:again"

        with anyio.fail_after(STEP_S):
            await peer.session_close(m.CloseSessionRequest(session_id=b))
        d = await new(echo_entry(ECHO_PREFIX="D:"))
        body = await prompt(d, "ECHO d1")
        assert _tool_result(body, "call_d1") == "D:back"


@pytest.mark.anyio
async def test_cancel_releases_a_waiting_mcp_call(
    hermes_py: str, llm: BenchModelServer, tmp_path: Path
) -> None:
    dirs = rig_dirs(tmp_path)
    env = hermes_env(dirs["hermes"], dirs["acpwire"], llm.base_url)
    async with backend(hermes_py, env, cwd=dirs["launch"], log=dirs["acpwire"] / "err.log") as link:
        ed, peer = link.handler, link.peer
        arrived = dirs["work"] / "block-called"
        sid = await new_session(link, dirs["work"], [echo_entry(ECHO_BLOCKED_FILE=str(arrived))])
        results: list[m.PromptResponse] = []

        async def run() -> None:
            results.append(await peer.session_prompt(text_prompt(sid, "BLOCK now")))

        # The server's call timeout is 120 s: ending well within 30 s means the cancel
        # released the waiting call.
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                # The cancel must meet the call itself, waiting in the server.
                while not arrived.exists():
                    await anyio.sleep(0.05)
                await peer.session_cancel(m.CancelNotification(session_id=sid))
        assert [r.stop_reason for r in results] == ["cancelled"]
        assert _statuses(ed, sid, "call_block")[-1] == "failed"
        (end,) = [
            n.update
            for n in ed.updates[sid]
            if isinstance(n.update, m.SessionUpdateToolCallUpdate)
            and n.update.tool_call_id == "call_block"
        ]
        # The call itself came back cancelled (not abandoned by the ending turn).
        assert end.raw_output == {"error": "MCP tool 'block' of server 'echo' was cancelled"}
