"""File edits end to end: the diff in ``session/request_permission``, every answer the
editor can give (allow, deny, timeout, cancelled, an option that was not offered), the
session modes, session-scoped grants and multi-file patches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_v1 import models as m
from tests.backend.harness import Rig, rig, tool_call, tool_texts

pytestmark = pytest.mark.anyio


async def edit_turn(r: Rig, sid: str, call: dict[str, Any]) -> m.PromptResponse:
    """One turn in which the model makes ``call`` and then says "ok"."""
    r.llm.push(call)
    r.llm.push({"text": "ok"})
    return await r.prompt(sid, "edit please")


def final_update(r: Rig, sid: str, call_id: str) -> Any:
    ends = [
        u
        for u in r.editor.of_kind(sid, "tool_call_update")
        if u.tool_call_id == call_id and u.status in ("completed", "failed")
    ]
    assert len(ends) == 1, f"expected exactly one terminal update for {call_id}: {ends}"
    return ends[0]


def texts(update: Any) -> str:
    return tool_texts(update.content)


def diffs(content: list[Any] | None) -> list[m.ToolCallContentDiff]:
    return [c for c in content or [] if isinstance(c, m.ToolCallContentDiff)]


async def test_write_allowed_once(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        sid = await r.new()
        target = r.workspace / "a.txt"
        result = await edit_turn(
            r, sid, tool_call("w1", "write_file", path="a.txt", content="hi\n")
        )
        assert result.stop_reason == "end_turn"
        assert target.read_text() == "hi\n"
        order = [
            (kind, getattr(p, "tool_call_id", None))
            for kind, s, p in r.editor.events
            if s == sid and kind in ("tool_call", "tool_call_update", "permission")
        ]
        assert order[0] == ("tool_call", "w1")
        assert order[1][0] == "permission"
        assert order[-1] == ("tool_call_update", "w1")
        start = r.editor.of_kind(sid, "tool_call")[0]
        assert start.kind == "edit"
        (request,) = r.editor.policy.requests
        assert request.tool_call.tool_call_id == "w1"
        (diff,) = diffs(request.tool_call.content)
        assert (diff.path, diff.old_text, diff.new_text) == (str(target), None, "hi\n")
        assert {o.option_id for o in request.options} == {"allow_once", "allow_session", "deny"}
        assert final_update(r, sid, "w1").status == "completed"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("deny", "the user denied this edit"),
        ("cancelled", "was cancelled"),
        ("allow_always", "no valid answer"),  # not offered for edits
        ("yes-please", "no valid answer"),
    ],
)
async def test_refused_edit_leaves_the_file_untouched(
    tmp_path: Path, answer: str, expected: str
) -> None:
    async with rig(tmp_path) as r:
        r.editor.policy.answer = answer
        sid = await r.new()
        target = r.workspace / "a.txt"
        target.write_text("before\n")
        await edit_turn(r, sid, tool_call("w1", "write_file", path="a.txt", content="after\n"))
        assert target.read_text() == "before\n"
        assert r.editor.writes == []
        end = final_update(r, sid, "w1")
        assert end.status == "failed"
        assert expected in texts(end)
        # The model was told the edit did not happen.
        tool_result = r.llm.requests[-1]["messages"][-1]
        assert tool_result["role"] == "tool" and "not modified" in tool_result["content"]


async def test_approval_timeout_is_not_a_denial(tmp_path: Path) -> None:
    async with rig(tmp_path, approval_timeout=0.3) as r:
        r.editor.policy.answer = None  # the editor never answers
        sid = await r.new()
        target = r.workspace / "a.txt"
        result = await edit_turn(r, sid, tool_call("w1", "write_file", path="a.txt", content="x"))
        assert result.stop_reason == "end_turn"
        assert not target.exists()
        end = final_update(r, sid, "w1")
        assert end.status == "failed"
        assert "approval timed out" in texts(end)
        assert "the user denied" not in texts(end)


async def test_multi_file_patch_shows_one_diff_per_file(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        sid = await r.new()
        (r.workspace / "app.py").write_text("def main():\n    print('old')\n")
        (r.workspace / "junk.txt").write_text("junk\n")
        patch = (
            "*** Begin Patch\n"
            "*** Update File: app.py\n"
            "@@ def main():\n"
            "-    print('old')\n"
            "+    print('new')\n"
            "*** Add File: notes.md\n"
            "+# Notes\n"
            "*** Delete File: junk.txt\n"
            "*** End Patch"
        )
        await edit_turn(r, sid, tool_call("p1", "patch", mode="patch", patch=patch))
        (request,) = r.editor.policy.requests
        shown = {d.path: (d.old_text, d.new_text) for d in diffs(request.tool_call.content)}
        assert shown == {
            str(r.workspace / "app.py"): (
                "def main():\n    print('old')\n",
                "def main():\n    print('new')\n",
            ),
            str(r.workspace / "notes.md"): (None, "# Notes\n"),
            str(r.workspace / "junk.txt"): ("junk\n", ""),
        }
        assert (r.workspace / "app.py").read_text() == "def main():\n    print('new')\n"
        assert (r.workspace / "notes.md").read_text() == "# Notes\n"
        assert not (r.workspace / "junk.txt").exists()
        end = final_update(r, sid, "p1")
        assert end.status == "completed"
        assert len(diffs(end.content)) == 3


MULTI = (
    "*** Begin Patch\n"
    "*** Update File: app.py\n"
    "@@ def main():\n"
    "-    print('old')\n"
    "+    print('new')\n"
    "*** Add File: notes.md\n"
    "+# Notes\n"
    "*** Update File: .env\n"
    "@@\n"
    "-KEY=1\n"
    "+KEY=2\n"
    "*** End Patch"
)


async def test_a_client_showing_one_diff_is_asked_file_by_file(tmp_path: Path) -> None:
    """CodeCompanion's dialog shows only the first diff: each file is asked on its own
    (every request shows the diff it is about); "allow for the session" on one covers
    the next ordinary file but not a sensitive one; a denial stops the whole patch."""
    async with rig(tmp_path, client_name="CodeCompanion.nvim") as r:
        sid = await r.new()
        (r.workspace / "app.py").write_text("def main():\n    print('old')\n")
        (r.workspace / ".env").write_text("KEY=1\n")
        r.editor.policy.first = ["allow_session", "deny"]
        await edit_turn(r, sid, tool_call("p1", "patch", mode="patch", patch=MULTI))
        asked = [
            (req.tool_call.title, [d.path for d in diffs(req.tool_call.content)])
            for req in r.editor.policy.requests
        ]
        assert asked == [
            (f"Approve edit (1 of 3): {r.workspace / 'app.py'}", [str(r.workspace / "app.py")]),
            (
                f"Approve edit (3 of 3): {r.workspace / '.env'} "
                "(protected: environment file (.env))",
                [str(r.workspace / ".env")],
            ),
        ]
        assert (r.workspace / "app.py").read_text() == "def main():\n    print('old')\n"
        assert not (r.workspace / "notes.md").exists()
        assert final_update(r, sid, "p1").status == "failed"
        r.editor.policy.first = ["allow_once"]
        await edit_turn(r, sid, tool_call("p2", "patch", mode="patch", patch=MULTI))
        assert len(r.editor.policy.requests) == 3  # the session grant covers the rest
        assert (r.workspace / ".env").read_text() == "KEY=2\n"
        assert (r.workspace / "notes.md").read_text() == "# Notes\n"


async def test_accept_edits_mode_still_asks_for_sensitive_files(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        sid = await r.new()
        await r.set_mode(sid, "accept_edits")
        await edit_turn(r, sid, tool_call("w1", "write_file", path="src/a.txt", content="a"))
        assert r.editor.policy.requests == []
        assert (r.workspace / "src/a.txt").read_text() == "a"
        assert final_update(r, sid, "w1").status == "completed"
        await edit_turn(r, sid, tool_call("w2", "write_file", path=".env", content="K=1"))
        (request,) = r.editor.policy.requests
        assert diffs(request.tool_call.content)[0].path == str(r.workspace / ".env")
        assert (r.workspace / ".env").read_text() == "K=1"


async def test_dont_ask_mode(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        sid = await r.new()
        await r.set_mode(sid, "dont_ask")
        outside = tmp_path / "elsewhere" / "b.txt"
        await edit_turn(r, sid, tool_call("w1", "write_file", path=str(outside), content="b"))
        assert r.editor.policy.requests == []
        assert outside.read_text() == "b"
        await edit_turn(r, sid, tool_call("w2", "write_file", path=".git/config", content="x"))
        assert len(r.editor.policy.requests) == 1


async def test_allow_session_is_remembered_for_that_session_only(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        r.editor.policy.answer = "allow_session"
        first = await r.new()
        await edit_turn(r, first, tool_call("w1", "write_file", path="a.txt", content="1"))
        await edit_turn(r, first, tool_call("w2", "write_file", path="b.txt", content="2"))
        assert len(r.editor.policy.requests) == 1
        assert (r.workspace / "b.txt").read_text() == "2"
        # Sensitive paths are asked even after "allow for this session".
        await edit_turn(r, first, tool_call("w3", "write_file", path=".env", content="3"))
        assert len(r.editor.policy.requests) == 2
        second = await r.new()
        r.editor.policy.answer = "deny"
        await edit_turn(r, second, tool_call("w4", "write_file", path="c.txt", content="4"))
        assert len(r.editor.policy.requests) == 3
        assert r.editor.policy.requests[-1].session_id == second
        assert not (r.workspace / "c.txt").exists()


async def test_a_file_edited_while_the_approval_waits_is_not_overwritten(tmp_path: Path) -> None:
    """The user changes the file while the permission dialog is open, then allows the
    edit: the edit is not applied over their change (it was planned on the old text)."""
    async with rig(tmp_path) as r:
        target = r.workspace / "notes.txt"
        target.write_text("alpha\nbeta\n")
        r.editor.policy.hold = anyio.Event()
        sid = await r.new()
        call = tool_call("p1", "patch", path="notes.txt", old_string="alpha", new_string="ALPHA")
        async with anyio.create_task_group() as tg:
            tg.start_soon(edit_turn, r, sid, call)
            await r.editor.wait_for(lambda: bool(r.editor.policy.requests))
            target.write_text("alpha\nbeta\nUSER EDIT\n")
            r.editor.policy.hold.set()
        assert target.read_text() == "alpha\nbeta\nUSER EDIT\n"
        end = final_update(r, sid, "p1")
        assert end.status == "failed" and "changed while the edit waited" in texts(end)
