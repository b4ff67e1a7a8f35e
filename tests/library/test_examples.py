"""The programs in examples/ run as documented (docs/LIBRARY.md), over real stdio where
they are processes. ``make type`` checks them with mypy --strict."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from acp_v1 import models as m
from acpwire import spawn_agent
from tests.library.editor import STEP_S, Editor, backend_env, prompt

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

pytestmark = pytest.mark.subprocess


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _run(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout


def test_the_client_drives_the_echo_agent_over_stdio() -> None:
    out = _run(str(EXAMPLES / "client.py")).splitlines()
    assert out[:3] == ["agent: echo", "hello from the client ", "stop: end_turn"]
    assert out[3] == "refused: -32602 the prompt has no text"
    assert out[-2] == "stop: cancelled" and out[-3].startswith("word0")
    assert "word199" not in "".join(out)  # the cancel stopped it midway
    assert out[-1] == "extension answer: {'prompts': 2}"


def test_the_in_memory_check_passes() -> None:
    assert _run(str(EXAMPLES / "in_memory.py")) == "in-memory check passed: one two three\n"


@pytest.mark.anyio
async def test_the_notes_agent_in_the_full_backend_asks_before_writing(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    command = [sys.executable, str(EXAMPLES / "notes_agent.py")]
    with anyio.fail_after(STEP_S * 2):
        async with spawn_agent(Editor, command, env=backend_env(tmp_path / "home")) as agent:
            peer, editor = agent.peer, agent.handler
            await peer.initialize(m.InitializeRequest(protocol_version=1))
            sid = (
                await peer.session_new(m.NewSessionRequest(cwd=str(work), mcp_servers=[]))
            ).session_id
            done = await peer.session_prompt(prompt(sid, "note: buy milk"))
            assert done.stop_reason == "end_turn"
            assert (work / "NOTES.md").read_text() == "- buy milk\n"
            editor.answer = "deny"
            await peer.session_prompt(prompt(sid, "note: sell milk"))
    assert (work / "NOTES.md").read_text() == "- buy milk\n"  # denied: nothing written
    asked = editor.permissions
    assert len(asked) == 2 and asked[0].tool_call.tool_call_id == "note-0"
    diffs = [c for c in asked[0].tool_call.content or [] if isinstance(c, m.ToolCallContentDiff)]
    assert diffs and diffs[0].new_text == "- buy milk\n" and diffs[0].old_text is None
    assert editor.text(sid) == "Noted in NOTES.md.Not written."
    assert agent.process.returncode == 0
