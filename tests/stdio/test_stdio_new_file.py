"""A new file written through the editor, on the wire: its diff carries ``"oldText": null``
(Toad shows the diff only then) and the editor is asked to read it once (acpx prints
"Resource not found" for each read of a missing file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.stdio.stdio_support import (
    ACPWIRE,
    STEP_TIMEOUT,
    JsonObject,
    child_env,
    raw_child,
    write_home,
)
from tests.support.fake_llm import FakeLLM

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

CAPS = {"fs": {"readTextFile": True, "writeTextFile": True}}


def _diffs(content: list[Any] | None) -> list[JsonObject]:
    return [c for c in content or [] if c.get("type") == "diff"]


async def test_a_new_file_diff_has_null_old_text_and_is_read_once(tmp_path: Path) -> None:
    work = (tmp_path / "work").resolve()
    work.mkdir()
    target = work / "new.txt"
    asked: list[JsonObject] = []

    def answer(message: JsonObject) -> JsonObject:
        asked.append(message)
        method, params = message["method"], message.get("params") or {}
        if method == "fs/read_text_file":  # as acpx answers for a missing file
            error = {"code": -32002, "message": f"Resource not found: {params['path']}"}
            return {"jsonrpc": "2.0", "id": message["id"], "error": error}
        if method == "fs/write_text_file":
            Path(params["path"]).write_text(params["content"], encoding="utf-8")
            return {"jsonrpc": "2.0", "id": message["id"], "result": {}}
        if method == "session/request_permission":
            allow = next(o for o in params["options"] if o["kind"] == "allow_once")
            outcome = {"outcome": "selected", "optionId": allow["optionId"]}
            return {"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": outcome}}
        return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}}

    write = {"name": "write_file", "arguments": {"path": "new.txt", "content": "hello\n"}}
    with FakeLLM([{"tool_calls": [write]}, {"text": "written"}]) as llm:
        home = write_home(tmp_path / "home", llm.base_url)
        async with raw_child(
            ACPWIRE, env=child_env(home), stderr_path=tmp_path / "stderr.log", answer=answer
        ) as peer:
            init = {"protocolVersion": 1, "clientCapabilities": CAPS}
            with anyio.fail_after(STEP_TIMEOUT):
                await peer.call("initialize", init)
                new = await peer.call("session/new", {"cwd": str(work), "mcpServers": []})
                sid = new["result"]["sessionId"]
                prompt = [{"type": "text", "text": "write it"}]
                done = await peer.call("session/prompt", {"sessionId": sid, "prompt": prompt})
            assert done["result"]["stopReason"] == "end_turn"
            assert await peer.finish() == 0
    assert target.read_text(encoding="utf-8") == "hello\n"
    reads = [m for m in asked if m["method"] == "fs/read_text_file"]
    assert [m["params"]["path"] for m in reads] == [str(target)]
    (permission,) = [m for m in asked if m["method"] == "session/request_permission"]
    (asked_diff,) = _diffs(permission["params"]["toolCall"].get("content"))
    assert "oldText" in asked_diff and asked_diff["oldText"] is None
    assert asked_diff["newText"] == "hello\n"
    shown = [
        diff
        for note in peer.notifications()
        if note["params"]["update"]["sessionUpdate"] in ("tool_call", "tool_call_update")
        for diff in _diffs(note["params"]["update"].get("content"))
    ]
    assert shown and all("oldText" in d and d["oldText"] is None for d in shown)
