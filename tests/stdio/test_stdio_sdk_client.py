"""The official SDK's client drives ``python -m acpwire`` over real pipes.

A peer nobody on this project wrote: the SDK decodes every answer and update into its
own models, so anything acpwire sends that the SDK cannot validate fails here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from acp.schema import (
    AgentMessageChunk,
    FileEditToolCallContent,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
)

from tests.stdio.sdk_client import EDITOR_CAPABILITIES, EDITOR_INFO, SdkEditor, spawn_acpwire
from tests.stdio.stdio_support import STEP_TIMEOUT, write_home
from tests.support.fake_llm import FakeLLM, last_user_text

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

GREETING = "Hello from the fake model, streamed in pieces."
NEW_FILE = "written by the model\n"
SCRIPT: list[dict[str, Any]] = [
    {"text": GREETING, "chunks": 5},
    {
        "tool_calls": [
            {
                "id": "call-w1",
                "name": "write_file",
                "arguments": {"path": "out.txt", "content": NEW_FILE},
            }
        ]
    },
    {"text": "Wrote out.txt."},
]


async def test_sdk_client_runs_a_whole_session_against_acpwire(tmp_path: Path) -> None:
    work = (tmp_path / "work").resolve()
    work.mkdir()
    editor = SdkEditor()
    with FakeLLM(SCRIPT) as llm:
        home = write_home(tmp_path / "home", llm.base_url)
        async with spawn_acpwire(editor, home, tmp_path / "stderr.log") as (conn, process, _):
            with anyio.fail_after(STEP_TIMEOUT):
                init = await conn.initialize(
                    protocol_version=1,
                    client_capabilities=EDITOR_CAPABILITIES,
                    client_info=EDITOR_INFO,
                )
            assert init.protocol_version == 1
            assert init.agent_info is not None and init.agent_info.name == "acpwire"
            assert init.agent_capabilities is not None
            assert init.agent_capabilities.load_session is True
            caps = init.agent_capabilities.session_capabilities
            assert caps is not None and caps.list is not None

            with anyio.fail_after(STEP_TIMEOUT):
                new = await conn.new_session(cwd=str(work), mcp_servers=[])
            sid = new.session_id
            assert sid
            assert new.modes is not None and new.modes.current_mode_id == "default"

            with anyio.fail_after(STEP_TIMEOUT):
                first = await conn.prompt(
                    session_id=sid, prompt=[TextContentBlock(type="text", text="say hello")]
                )
            assert first.stop_reason == "end_turn"
            chunks = editor.of_type(sid, AgentMessageChunk)
            assert chunks, "no agent_message_chunk reached the SDK client"
            assert all(isinstance(c.content, TextContentBlock) for c in chunks)
            assert editor.text(sid) == GREETING
            assert last_user_text(llm.requests[0]["messages"]) == "say hello"

            with anyio.fail_after(STEP_TIMEOUT):
                second = await conn.prompt(
                    session_id=sid, prompt=[TextContentBlock(type="text", text="write the file")]
                )
            assert second.stop_reason == "end_turn"

            # The edit was asked for, with the diff, and answered allow_once.
            assert len(editor.permissions) == 1
            asked, options = editor.permissions[0]
            assert asked.tool_call_id == "call-w1" and asked.kind == "edit"
            assert "allow_once" in {o.kind for o in options}
            diffs = [c for c in asked.content or [] if isinstance(c, FileEditToolCallContent)]
            assert [(d.path, d.old_text, d.new_text) for d in diffs] == [
                (str(work / "out.txt"), None, NEW_FILE)
            ]
            # The write went through the editor (fs/write_text_file), into the temp cwd.
            assert editor.writes == [(str(work / "out.txt"), NEW_FILE)]
            assert (work / "out.txt").read_text(encoding="utf-8") == NEW_FILE

            starts = editor.of_type(sid, ToolCallStart)
            assert [(s.tool_call_id, s.kind) for s in starts] == [("call-w1", "edit")]
            ends = [u for u in editor.of_type(sid, ToolCallProgress) if u.status == "completed"]
            assert [e.tool_call_id for e in ends] == ["call-w1"]
            assert editor.text(sid).endswith("Wrote out.txt.")
            tool_messages = [m for m in llm.requests[2]["messages"] if m["role"] == "tool"]
            assert [m["tool_call_id"] for m in tool_messages] == ["call-w1"]

            with anyio.fail_after(STEP_TIMEOUT):
                listed = await conn.list_sessions()
            assert [(s.session_id, s.cwd) for s in listed.sessions] == [(sid, str(work))]
            assert listed.sessions[0].title

    assert process.returncode == 0
    assert "Traceback" not in (tmp_path / "stderr.log").read_text(encoding="utf-8")
