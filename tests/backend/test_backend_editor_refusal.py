"""The editor's answer is final: an error answer to ``fs/read_text_file``,
``fs/write_text_file`` or ``terminal/create`` fails the tool call with the editor's words,
tells the model not to retry it another way, and nothing is read, written or run locally.
Only a client that does not implement the method (``-32601``) gets the local fallback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_v1 import models as m
from acpwire.rpc import RpcError, method_not_found
from tests.backend.harness import (
    TERMINAL_CAPS,
    EditorClient,
    Rig,
    model_tool_result,
    rig,
    tool_call,
    tool_texts,
)

pytestmark = pytest.mark.anyio

OUTSIDE = "Path is outside allowed cwd subtree"


class RefusingEditor(EditorClient):
    """Refuses as acpx does: a plain -32603 whose data carries the reason, and a
    permission error for terminals."""

    async def fs_read_text_file(self, params: m.ReadTextFileRequest) -> m.ReadTextFileResponse:
        self.reads.append(params.path)
        raise RpcError(-32603, "Internal error", {"details": f"{OUTSIDE}: {params.path}"})

    async def fs_write_text_file(self, params: m.WriteTextFileRequest) -> m.WriteTextFileResponse:
        self.writes.append((params.path, params.content))
        raise RpcError(-32603, "Internal error", {"details": f"{OUTSIDE}: {params.path}"})

    async def terminal_create(self, params: m.CreateTerminalRequest) -> m.CreateTerminalResponse:
        self.events.append(("terminal_create", "", params))
        raise RpcError(-32000, "Permission denied")


class UnimplementingEditor(EditorClient):
    """Advertises fs and terminals, then answers -32601 to each (it does not offer them)."""

    async def fs_read_text_file(self, params: m.ReadTextFileRequest) -> m.ReadTextFileResponse:
        self.reads.append(params.path)
        raise method_not_found("fs/read_text_file")

    async def fs_write_text_file(self, params: m.WriteTextFileRequest) -> m.WriteTextFileResponse:
        self.writes.append((params.path, params.content))
        raise method_not_found("fs/write_text_file")

    async def terminal_create(self, params: m.CreateTerminalRequest) -> m.CreateTerminalResponse:
        self.events.append(("terminal_create", "", params))
        raise method_not_found("terminal/create")


def final_update(r: Rig, sid: str, call_id: str) -> Any:
    (end,) = [
        u
        for u in r.editor.of_kind(sid, "tool_call_update")
        if u.tool_call_id == call_id and u.status in ("completed", "failed")
    ]
    return end


async def run_calls(r: Rig, *calls: dict[str, Any]) -> str:
    for call in calls:
        r.llm.push(call)
    r.llm.push({"text": "done"})
    sid = await r.new()
    assert (await r.prompt(sid, "go")).stop_reason == "end_turn"
    return sid


async def test_a_refused_write_fails_and_nothing_is_written(tmp_path: Path) -> None:
    async with rig(tmp_path, caps=TERMINAL_CAPS, editor=RefusingEditor) as r:
        target = r.workspace / "out.txt"
        sid = await run_calls(r, tool_call("w1", "write_file", path="out.txt", content="x\n"))
        assert r.editor.writes == [(str(target), "x\n")]
        assert not target.exists()
        end = final_update(r, sid, "w1")
        assert end.status == "failed"
        assert OUTSIDE in tool_texts(end.content)
        result = json.loads(model_tool_result(r, "w1"))
        assert result["refused_by_editor"] is True
        assert "The editor refused to write" in result["error"] and OUTSIDE in result["error"]
        assert "Do not retry" in result["error"]


async def test_a_refused_patch_of_an_existing_file_leaves_it(tmp_path: Path) -> None:
    async with rig(tmp_path, caps=TERMINAL_CAPS, editor=RefusingEditor) as r:
        source = r.workspace / "main.py"
        source.write_text("secret = 1\n")
        sid = await run_calls(
            r, tool_call("p1", "patch", path="main.py", old_string="1", new_string="2")
        )
        assert source.read_text() == "secret = 1\n"
        assert r.editor.writes == [] and r.editor.reads == [str(source)]
        assert final_update(r, sid, "p1").status == "failed"
        assert r.editor.policy.requests == []  # nothing to approve: the read was refused
        assert "secret" not in model_tool_result(r, "p1")


async def test_a_refused_read_fails_and_the_disk_is_not_read(tmp_path: Path) -> None:
    async with rig(tmp_path, caps=TERMINAL_CAPS, editor=RefusingEditor) as r:
        source = r.workspace / "main.py"
        source.write_text("token = 'on disk only'\n")
        sid = await run_calls(r, tool_call("r1", "read_file", path="main.py"))
        assert r.editor.reads == [str(source)]
        end = final_update(r, sid, "r1")
        assert end.status == "failed"
        assert OUTSIDE in tool_texts(end.content)
        result = model_tool_result(r, "r1")
        assert "on disk only" not in result and "The editor refused to read" in result


async def test_a_refused_terminal_runs_nothing_locally(tmp_path: Path) -> None:
    async with rig(tmp_path, caps=TERMINAL_CAPS, editor=RefusingEditor) as r:
        marker = r.workspace / "ran.txt"
        sid = await run_calls(r, tool_call("t1", "terminal", command=f"touch {marker}"))
        assert [e[0] for e in r.editor.events].count("terminal_create") == 1
        assert not marker.exists()
        end = final_update(r, sid, "t1")
        assert end.status == "failed"
        assert "Permission denied" in tool_texts(end.content)
        result = model_tool_result(r, "t1")
        assert "The editor refused to run" in result and "Do not retry" in result
        # The session keeps serving.
        r.llm.push({"text": "still here"})
        assert (await r.prompt(sid, "next")).stop_reason == "end_turn"


async def test_a_client_without_the_methods_gets_the_local_fallback(tmp_path: Path) -> None:
    async with rig(tmp_path, caps=TERMINAL_CAPS, editor=UnimplementingEditor) as r:
        source = r.workspace / "main.py"
        source.write_text("from the disk\n")
        marker = r.workspace / "ran.txt"
        sid = await run_calls(
            r,
            tool_call("r1", "read_file", path="main.py"),
            tool_call("w1", "write_file", path="out.txt", content="written\n"),
            tool_call("t1", "terminal", command=f"touch {marker}"),
        )
        assert "from the disk" in model_tool_result(r, "r1")
        assert (r.workspace / "out.txt").read_text() == "written\n"
        assert marker.exists()
        assert {c: final_update(r, sid, c).status for c in ("r1", "w1", "t1")} == {
            "r1": "completed",
            "w1": "completed",
            "t1": "completed",
        }
        assert str(source) in r.editor.reads and r.editor.writes
