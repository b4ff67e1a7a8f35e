"""A whole agent turn in which the model calls an MCP tool of a real stdio server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from acpwire.agent.embedded.default import DefaultAgent
from acpwire.mcp import McpServerHost
from tests.agent.recording import run_once
from tests.mcp.support import MakeState, echo_entry
from tests.support.fake_llm import FakeLLM

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


async def test_model_calls_an_mcp_tool_during_a_turn(
    llm: FakeLLM, make_state: MakeState, tmp_path: Path
) -> None:
    state = make_state(base_url=llm.base_url)
    agent = state.agent
    assert isinstance(agent, DefaultAgent)
    llm.push({"tool_calls": [{"id": "c1", "name": "echo__echo", "arguments": {"text": "ping"}}]})
    llm.push({"tool_calls": [{"id": "c2", "name": "echo__fail", "arguments": {"reason": "no"}}]})
    llm.push({"text": "Done."})
    with anyio.fail_after(60):
        async with McpServerHost() as host:
            assert await host.start(state, [echo_entry(ECHO_PREFIX="echo: ")]) == []
            result, hooks = await anyio.to_thread.run_sync(run_once, agent, tmp_path, "go")
    assert result.stop == "end_turn" and result.final_text == "Done."
    offered = {tool["function"]["name"] for tool in llm.requests[0]["tools"]}
    assert {"echo__echo", "echo__fail", "echo__server_info"} <= offered
    assert [(end.name, end.failed) for end in hooks.ends] == [
        ("echo__echo", False),
        ("echo__fail", True),
    ]
    tool_messages = [msg for msg in result.messages if msg["role"] == "tool"]
    assert tool_messages[0]["content"] == "echo: ping"
    assert "failed on purpose: no" in json.loads(tool_messages[1]["content"])["error"]
