"""File tools through the editor (``fs/*``) when it advertises them, the disk otherwise,
and the ``todo`` tool as ``plan`` updates."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from acp_v1 import models as m
from tests.backend.harness import FS_CAPS, NO_CAPS, rig, tool_call

pytestmark = pytest.mark.anyio


def tool_result(messages: list[dict[str, object]], call_id: str) -> str:
    (found,) = [x for x in messages if x.get("role") == "tool" and x.get("tool_call_id") == call_id]
    return str(found["content"])


async def test_with_fs_caps_files_go_through_the_editor(tmp_path: Path) -> None:
    async with rig(tmp_path, caps=FS_CAPS) as r:
        source = r.workspace / "main.py"
        source.write_text("on disk\n")
        r.editor.buffers[str(source)] = "unsaved in the editor\n"
        r.llm.push(tool_call("r1", "read_file", path="main.py"))
        r.llm.push(tool_call("w1", "write_file", path="out.txt", content="written\n"))
        r.llm.push({"text": "done"})
        sid = await r.new()
        assert (await r.prompt(sid, "read and write")).stop_reason == "end_turn"
        messages = r.llm.requests[-1]["messages"]
        assert "unsaved in the editor" in tool_result(messages, "r1")
        assert "on disk" not in tool_result(messages, "r1")
        assert str(source) in r.editor.reads
        assert r.editor.writes == [(str(r.workspace / "out.txt"), "written\n")]


@pytest.mark.parametrize("caps", [NO_CAPS, None])
async def test_without_fs_caps_files_use_the_disk(
    tmp_path: Path, caps: m.ClientCapabilities | None
) -> None:
    async with rig(tmp_path, caps=caps) as r:
        source = r.workspace / "main.py"
        source.write_text("on disk\n")
        r.editor.buffers[str(source)] = "unsaved in the editor\n"
        r.llm.push(tool_call("r1", "read_file", path="main.py"))
        r.llm.push(tool_call("w1", "write_file", path="out.txt", content="written\n"))
        r.llm.push({"text": "done"})
        sid = await r.new()
        assert (await r.prompt(sid, "read and write")).stop_reason == "end_turn"
        messages = r.llm.requests[-1]["messages"]
        assert "on disk" in tool_result(messages, "r1")
        assert (r.workspace / "out.txt").read_text() == "written\n"
        assert r.editor.reads == [] and r.editor.writes == []


async def test_todo_becomes_a_plan(tmp_path: Path) -> None:
    todos = [
        {"id": "1", "content": "read the code", "status": "completed"},
        {"id": "2", "content": "fix the bug", "status": "in_progress"},
        {"id": "3", "content": "write docs", "status": "cancelled"},
        {"id": "4", "content": "release", "status": "pending"},
    ]
    async with rig(tmp_path, [tool_call("t1", "todo", todos=todos), {"text": "planned"}]) as r:
        sid = await r.new()
        await r.prompt(sid, "plan it")
        (plan,) = r.editor.of_kind(sid, "plan")
        assert [(e.content, e.status) for e in plan.entries] == [
            ("read the code", "completed"),
            ("fix the bug", "in_progress"),
            ("[cancelled] write docs", "completed"),
            ("release", "pending"),
        ]
        kinds = r.editor.kinds(sid)
        assert kinds.index("tool_call") < kinds.index("plan")
        ends = [u for u in r.editor.of_kind(sid, "tool_call_update") if u.status]
        assert [(u.tool_call_id, u.status) for u in ends] == [("t1", "completed")]


async def test_an_empty_editor_read_of_a_missing_file_is_not_an_empty_file(
    tmp_path: Path,
) -> None:
    """CodeCompanion answers ``""`` when the file does not exist: acpwire checks the
    disk, so the model hears "not found" rather than "empty"; a real empty file is
    still empty."""
    async with rig(tmp_path, caps=FS_CAPS, client_name="CodeCompanion.nvim") as r:
        missing, empty = r.workspace / "missing.py", r.workspace / "empty.py"
        empty.write_text("")
        r.editor.buffers[str(missing)] = ""  # what CodeCompanion sends for ENOENT
        r.llm.push(tool_call("r1", "read_file", path="missing.py"))
        r.llm.push(tool_call("r2", "read_file", path="empty.py"))
        r.llm.push({"text": "done"})
        sid = await r.new()
        assert (await r.prompt(sid, "read both")).stop_reason == "end_turn"
        messages = r.llm.requests[-1]["messages"]
        assert "not found" in tool_result(messages, "r1").lower()
        assert "not found" not in tool_result(messages, "r2").lower()
        assert {str(missing), str(empty)} <= set(r.editor.reads)


async def test_a_client_that_hides_tool_content_gets_the_output_as_a_message(
    tmp_path: Path,
) -> None:
    """Obsidian shows diffs and terminals but not ``content`` items: a finished call's
    text output is repeated as a message there, and only there."""
    for client, mirrored in (("obsidian-agent-client", True), ("test-editor", False)):
        async with rig(tmp_path / client, caps=NO_CAPS, client_name=client) as r:
            (r.workspace / "notes.md").write_text("line with ``` fences\n")
            r.llm.push(tool_call("r1", "read_file", path="notes.md"))
            r.llm.push({"text": "done"})
            sid = await r.new()
            assert (await r.prompt(sid, "read it")).stop_reason == "end_turn"
            texts = [u.content.text for u in r.editor.of_kind(sid, "agent_message_chunk")]
            shown = [t for t in texts if "Tool output:" in t]
            if not mirrored:
                assert shown == []
                continue
            (message,) = shown
            assert "line with ``` fences" in message
            assert message.startswith("\n\nTool output:\n") and message.endswith("\n\n")
            lines = message.strip("\n").split("\n")
            fence, body = lines[1], lines[2:-1]
            assert lines[-1] == fence
            longest = max(len(run) for run in re.findall("`+", "\n".join(body)))
            assert set(fence) == {"`"} and len(fence) > longest  # the output cannot close it
            kinds = r.editor.kinds(sid)
            end = max(i for i, k in enumerate(kinds) if k == "tool_call_update")
            assert kinds[end + 1] == "agent_message_chunk"  # right after the call ended
