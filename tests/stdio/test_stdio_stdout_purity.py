"""Stdout of ``python -m acpwire`` carries JSON-RPC messages and nothing else.

The run logs at DEBUG and the model has a tool print: ``echo hi`` (whose output must
reach the tool result) and, on Linux, a write straight to the backend's own fd 1
through ``/proc`` (which must land on stderr; the session is in Full Access mode, so the
command runs outside the sandbox, where it can reach that fd). Every stdout line is then parsed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.stdio.stdio_support import (
    ACPWIRE,
    STEP_TIMEOUT,
    child_env,
    parse_lines,
    raw_child,
    write_home,
)
from tests.support.fake_llm import FakeLLM

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

HAS_PROC_FD = sys.platform.startswith("linux") and Path("/proc/self/fd/1").exists()
# $PPID of the tool's shell is the backend; `>>` keeps a log file from being truncated.
# The shell computes the marker, so the command text (echoed in tool updates) lacks it.
LEAK = "fd1-leak-42"
COMMAND = "echo hi" + ("; echo fd1-leak-$((6*7)) >> /proc/$PPID/fd/1" if HAS_PROC_FD else "")


async def test_stdout_holds_only_protocol_messages(tmp_path: Path) -> None:
    work = (tmp_path / "work").resolve()
    work.mkdir()
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"id": "call-t1", "name": "terminal", "arguments": {"command": COMMAND}}]},
        {"text": "The command printed hi."},
    ]
    stderr_path = tmp_path / "stderr.log"
    with FakeLLM(script) as llm:
        home = write_home(tmp_path / "home", llm.base_url)
        async with raw_child(
            (*ACPWIRE, "--log-level", "DEBUG"), env=child_env(home), stderr_path=stderr_path
        ) as peer:
            with anyio.fail_after(STEP_TIMEOUT):
                init = await peer.call("initialize", {"protocolVersion": 1})
                assert init["result"]["protocolVersion"] == 1
                new = await peer.call("session/new", {"cwd": str(work), "mcpServers": []})
                sid = new["result"]["sessionId"]
                # Unsandboxed, so that the command can reach the backend's own fd 1 (in
                # the sandbox's pid namespace $PPID is not the backend).
                mode = {"sessionId": sid, "modeId": "full_access"}
                assert "result" in await peer.call("session/set_mode", mode)
                prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "run echo"}]}
                answer = await peer.call("session/prompt", prompt)
            assert answer["result"]["stopReason"] == "end_turn"
            assert await peer.finish() == 0

    messages = parse_lines(peer.lines)
    assert len(messages) == len(peer.lines) >= 4

    # The command's output is the tool's result, for the model and for the editor.
    tool_messages = [m for m in llm.requests[1]["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 1
    assert json.loads(tool_messages[0]["content"]) == {"output": "hi\n", "exit_code": 0}
    updates = [m["params"]["update"] for m in peer.notifications()]
    ends = [
        u
        for u in updates
        if u["sessionUpdate"] == "tool_call_update"
        and u["toolCallId"] == "call-t1"
        and u.get("status") == "completed"
    ]
    assert len(ends) == 1
    assert "hi" in json.dumps(ends[0].get("content", [])) + json.dumps(ends[0].get("rawOutput"))

    stdout_text = b"\n".join(peer.lines).decode("utf-8", errors="replace")
    stderr_text = stderr_path.read_text(encoding="utf-8", errors="replace")
    assert "[DEBUG]" in stderr_text  # the DEBUG logs went somewhere, and it was stderr
    assert "[DEBUG]" not in stdout_text
    if HAS_PROC_FD:
        assert LEAK in stderr_text
        assert LEAK not in stdout_text
    assert "Traceback" not in stderr_text
