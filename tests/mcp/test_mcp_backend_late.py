"""Session set-up does not wait for a slow MCP server longer than the client waits for its
answer: the server joins later, the user is told, and its tools work from then on."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import anyio
import pytest

from acp_v1 import models as m
from acpwire.mcp import McpServerHost
from acpwire.server.app import Runtime
from tests.backend.harness import (
    EditorClient,
    connected,
    make_settings,
    models_listed,
    workspace_of,
)
from tests.mcp.support import slow_echo
from tests.support.fake_llm import FakeLLM

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]


def messages(editor: EditorClient, sid: str) -> list[str]:
    return [u.content.text for u in editor.of_kind(sid, "agent_message_chunk")]


async def test_a_slow_server_joins_after_the_answer(tmp_path: Path) -> None:
    call = {"id": "c1", "name": "slow__echo", "arguments": {"text": "late but here"}}
    with FakeLLM([{"tool_calls": [call]}, {"text": "Done."}]) as llm:
        settings = make_settings(tmp_path / "home", llm.base_url)
        runtime = Runtime.create(dataclasses.replace(settings, mcp_wait_s=0.5))
        try:
            async with connected(runtime, mcp=McpServerHost()) as client:
                await models_listed(runtime)
                cwd = str(workspace_of(tmp_path))
                with anyio.fail_after(1.9):  # the server needs 2 s and more to start
                    new = await client.peer.session_new(
                        m.NewSessionRequest(cwd=cwd, mcp_servers=[slow_echo("slow", 2.0)])
                    )
                sid = new.session_id
                editor = client.handler
                with anyio.fail_after(30):
                    await editor.wait_for(
                        lambda: any("is ready (" in t for t in messages(editor, sid))
                    )
                assert messages(editor, sid)[:2] == [
                    "MCP server 'slow' is still starting; its tools follow when it is ready.",
                    "MCP server 'slow' is ready (4 tools).",
                ]
                with anyio.fail_after(30):
                    done = await client.peer.session_prompt(
                        m.PromptRequest(session_id=sid, prompt=[m.ContentBlockText(text="go")])
                    )
                assert done.stop_reason == "end_turn"
                tool = [x for x in llm.requests[-1]["messages"] if x["role"] == "tool"]
                assert tool[0]["content"] == "late but here"
        finally:
            runtime.close()
