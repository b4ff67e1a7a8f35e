"""The programs in examples/ run as documented (docs/LIBRARY.md), over real stdio where
they are processes. ``make type`` checks them with mypy --strict."""

from __future__ import annotations

import re
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
        [sys.executable, *args], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_example_is_run_here() -> None:
    # An example the tests do not run can drift from the code (and from docs/LIBRARY.md).
    source = Path(__file__).read_text()
    named = set(re.findall(r'EXAMPLES / "([\w.]+)"', source))
    assert named == {p.name for p in EXAMPLES.glob("*.py")}


def test_the_client_drives_the_echo_agent_over_stdio() -> None:
    agent = [sys.executable, str(EXAMPLES / "echo_agent.py")]
    out = _run(str(EXAMPLES / "client.py"), *agent).splitlines()
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


def _turns(out: list[str]) -> list[list[str]]:
    """The client's transcript cut at each prompt (``> text``)."""
    turns: list[list[str]] = []
    for line in out:
        if line.startswith("> "):
            turns.append([])
        if turns:
            turns[-1].append(line)
    return turns


def test_the_editor_client_answers_permissions_and_files_of_the_notes_agent() -> None:
    # The client walkthrough of docs/LIBRARY.md, over real stdio, against the full backend.
    out = _run(str(EXAMPLES / "editor_client.py"), sys.executable, str(EXAMPLES / "notes_agent.py"))
    lines = out.splitlines()
    assert lines[0] == "agent: acpwire, protocol 1"
    first, second, denied, count = _turns(lines)[:4]
    asked = [line for line in first if line.startswith("  asked: Approve edit: ")]
    assert len(asked) == 1 and asked[0].endswith("NOTES.md ['allow_once', 'allow_session', 'deny']")
    # The first note creates the file (no read); each allowed note is written by the client.
    assert sorted(line for line in first if not line.startswith(("  asked", "  tool call"))) == [
        "  Noted in NOTES.md. (end_turn)",
        "  wrote: NOTES.md",
        "> note: buy milk",
    ]
    assert "  read: NOTES.md" in second and "  wrote: NOTES.md" in second
    assert "  read: NOTES.md" in denied and "  wrote: NOTES.md" not in denied
    assert denied[-1] == "  Not written. (end_turn)"
    stopped = re.fullmatch(r"  \.\.\.(\d+) stopped \(cancelled\)", count[1])
    assert stopped and 3 <= int(stopped[1]) < 99, count
    assert lines[-4:] == [
        "error: -32002 Resource not found: Session 'no-such-session' not found",
        "closed: -32603 Connection closed",
        "agent exit code: 0",
        "NOTES.md: - buy milk | - call mum",
    ]
