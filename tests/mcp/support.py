"""Helpers for the MCP host tests: ACP server entries for the echo server, process checks."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import anyio.to_thread

from acp_v1 import models as m
from acpwire.agent.embedded.tools.base import ToolOutcome, ToolRegistry
from acpwire.mcp.tools import McpTool
from acpwire.server.sessions.state import SessionState

ECHO_SERVER = Path(__file__).with_name("echo_server.py")

MakeState = Callable[..., SessionState]
"""The ``make_state`` fixture: ``make_state(session_id="s", base_url=...)``."""


def echo_entry(name: str = "echo", **env: str) -> m.McpServerStdio:
    """The echo server as a client would name it in ``session/new``."""
    return m.McpServerStdio(
        name=name,
        command=sys.executable,
        args=[str(ECHO_SERVER)],
        env=[m.EnvVariable(name=key, value=value) for key, value in env.items()],
    )


def python_entry(name: str, code: str) -> m.McpServerStdio:
    """A stdio "server" that is really a Python one-liner (for failure cases)."""
    return m.McpServerStdio(name=name, command=sys.executable, args=["-c", code], env=[])


def slow_echo(name: str, delay_s: float) -> m.McpServerStdio:
    """The echo server, after ``delay_s`` seconds of start-up (a first ``npx`` download)."""
    code = (
        f"import time, runpy; time.sleep({delay_s}); "
        f"runpy.run_path({str(ECHO_SERVER)!r}, run_name='__main__')"
    )
    return python_entry(name, code)


def registry(state: SessionState) -> ToolRegistry:
    tools = getattr(state.agent, "tools", None)
    assert isinstance(tools, ToolRegistry)
    return tools


def mcp_tool(state: SessionState, name: str) -> McpTool:
    tool = registry(state).get(name)
    assert isinstance(tool, McpTool), f"{name!r} is not a registered MCP tool"
    return tool


async def call_in_thread(tool: McpTool, **args: object) -> ToolOutcome:
    """Call the tool the way the agent does: from a worker thread."""
    return await anyio.to_thread.run_sync(tool.call, dict(args))


async def server_info(state: SessionState, server: str = "echo") -> dict[str, object]:
    outcome = await call_in_thread(mcp_tool(state, f"{server}__server_info"))
    assert not outcome.failed, outcome.result_text
    info = json.loads(outcome.result_text)
    assert isinstance(info, dict)
    return info


def process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
