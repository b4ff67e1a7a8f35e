"""Bounded tools, replayed through the backend: a scripted model reads /dev/zero, hits a
FIFO and a link to a device in the repository, blows a patch up with ``replace_all``, runs
a catastrophic regex (then cancels, or lets it time out) and attaches many files. Each
is refused or cut with a message, nothing is read or written, no process is left burning
CPU, and the session keeps serving."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_v1 import models as m
from acpwire.config.limits import ToolLimits
from tests.backend.harness import (
    FS_CAPS,
    NO_CAPS,
    STEP_S,
    Rig,
    model_tool_result,
    rig,
    tool_call,
    tool_texts,
)

pytestmark = pytest.mark.anyio

WORKER_MARK = "acpwire.agent.embedded.tools.grep"
CATASTROPHIC = "(a+)+$"


def ended(r: Rig, sid: str, call_id: str) -> Any:
    for u in r.editor.of_kind(sid, "tool_call_update"):
        if u.tool_call_id == call_id and u.status in ("completed", "failed"):
            return u
    return None


def search_workers() -> list[int]:
    """Live search worker processes started by this test process."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == os.getpid() and fields[0] != "Z" and WORKER_MARK in cmdline:
            found.append(int(entry))
    return found


async def turn(r: Rig, sid: str, *calls: dict[str, Any]) -> None:
    for call in calls:
        r.llm.push(call)
    r.llm.push({"text": "done"})
    assert (await r.prompt(sid, "go")).stop_reason == "end_turn"


async def still_serving(r: Rig, sid: str) -> None:
    r.llm.push({"text": "still here"})
    assert (await r.prompt(sid, "next")).stop_reason == "end_turn"
    assert "still here" in r.editor.text(sid)


@pytest.mark.parametrize("caps", [FS_CAPS, NO_CAPS], ids=["editor-fs", "disk"])
async def test_read_file_refuses_a_device(tmp_path: Path, caps: m.ClientCapabilities) -> None:
    async with rig(tmp_path, caps=caps) as r:
        sid = await r.new()
        await turn(r, sid, tool_call("r1", "read_file", path="/dev/zero"))
        end = ended(r, sid, "r1")
        assert end is not None and end.status == "failed"
        assert "character device" in tool_texts(end.content)
        assert "character device" in model_tool_result(r, "r1")
        assert r.editor.reads == []  # refused before the editor was asked
        await still_serving(r, sid)


async def test_a_fifo_in_the_repository_wedges_nothing(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        os.mkfifo(r.workspace / "pipe")
        (r.workspace / "zero").symlink_to("/dev/zero")
        (r.workspace / "notes.txt").write_text("needle here\n")
        sid = await r.new()
        await turn(
            r,
            sid,
            tool_call("r1", "read_file", path="pipe"),
            tool_call("r2", "read_file", path="zero"),
            tool_call("w1", "write_file", path="pipe", content="x"),
            tool_call("s1", "search_files", pattern="needle"),
        )
        assert "FIFO" in model_tool_result(r, "r1") and "character device" in model_tool_result(
            r, "r2"
        )
        assert "FIFO" in model_tool_result(r, "w1")
        assert r.editor.reads == [] and r.editor.writes == [] and r.editor.policy.requests == []
        assert {c: ended(r, sid, c).status for c in ("r1", "r2", "w1", "s1")} == {
            "r1": "failed",
            "r2": "failed",
            "w1": "failed",
            "s1": "completed",
        }
        found = json.loads(model_tool_result(r, "s1"))
        assert [(x["path"], x["line"]) for x in found["matches"]] == [("notes.txt", 1)]
        assert found["skipped_not_regular"] == ["pipe", "zero"]
        await still_serving(r, sid)


async def test_replace_all_blow_up_fails_before_it_is_built(tmp_path: Path) -> None:
    async with rig(tmp_path, tools=ToolLimits(max_file_bytes=1_000_000)) as r:
        source = r.workspace / "a.txt"
        source.write_text("a" * 100_000)
        sid = await r.new()
        await turn(
            r,
            sid,
            tool_call(
                "p1", "patch", path="a.txt", old_string="a", new_string="b" * 1000, replace_all=True
            ),
        )
        end = ended(r, sid, "p1")
        assert end is not None and end.status == "failed"
        assert "over the cap of 1000000 bytes" in model_tool_result(r, "p1")
        assert source.read_text() == "a" * 100_000
        assert r.editor.policy.requests == [] and r.editor.writes == []
        await still_serving(r, sid)


async def test_a_read_over_the_caps_is_refused_or_paged(tmp_path: Path) -> None:
    limits = ToolLimits(max_file_bytes=50_000, max_result_chars=2_000)
    async with rig(tmp_path, tools=limits) as r:
        (r.workspace / "big.txt").write_text("x" * 60_000)
        (r.workspace / "lines.txt").write_text("".join(f"line {i}\n" for i in range(1000)))
        sid = await r.new()
        await turn(
            r,
            sid,
            tool_call("r1", "read_file", path="big.txt"),
            tool_call("r2", "read_file", path="lines.txt"),
            tool_call("w1", "write_file", path="new.txt", content="y" * 60_000),
            tool_call("s1", "search_files", pattern="line"),
        )
        assert "over the cap of 50000 bytes" in model_tool_result(r, "r1")
        assert not (r.workspace / "new.txt").exists()
        assert "over the cap" in model_tool_result(r, "w1")
        paged = model_tool_result(r, "r2")
        assert len(paged) <= 2_100 and "continue with offset=" in paged
        found = json.loads(model_tool_result(r, "s1"))
        assert found["truncated"] is True and 0 < found["count"] < 50


async def test_a_catastrophic_regex_stops_at_cancel(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        (r.workspace / "long.txt").write_text("a" * 60 + "!\n")
        sid = await r.new()
        r.llm.push(tool_call("s1", "search_files", pattern=CATASTROPHIC))
        answers: list[m.PromptResponse] = []

        async def run() -> None:
            answers.append(await r.prompt(sid, "search"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            with anyio.fail_after(STEP_S):
                while not search_workers():
                    await anyio.sleep(0.05)
            await r.cancel(sid)
        assert answers[0].stop_reason == "cancelled"
        await r.editor.wait_for(lambda: ended(r, sid, "s1") is not None)
        assert ended(r, sid, "s1").status == "failed"
        assert search_workers() == []
        await still_serving(r, sid)


async def test_a_catastrophic_regex_stops_at_the_time_limit(tmp_path: Path) -> None:
    async with rig(tmp_path, tools=ToolLimits(search_timeout_s=1.0)) as r:
        (r.workspace / "long.txt").write_text("a" * 60 + "!\n")
        sid = await r.new()
        await turn(r, sid, tool_call("s1", "search_files", pattern=CATASTROPHIC))
        end = ended(r, sid, "s1")
        assert end is not None and end.status == "failed"
        assert "stopped after 1s" in model_tool_result(r, "s1")
        assert search_workers() == []
        await still_serving(r, sid)


async def test_the_attachments_of_one_prompt_have_a_total_cap(tmp_path: Path) -> None:
    async with rig(tmp_path, tools=ToolLimits(max_attachments_bytes=1_000_000)) as r:
        blocks: list[m.ContentBlock] = [m.ContentBlockText(text="look at these")]
        for index in range(6):
            path = r.workspace / f"f{index}.txt"
            path.write_text(f"marker-{index}\n" + "z" * 300_000)
            blocks.append(m.ContentBlockResourceLink(uri=path.as_uri(), name=path.name))
        r.llm.push({"text": "seen"})
        sid = await r.new()
        with anyio.fail_after(STEP_S):
            answer = await r.peer.session_prompt(m.PromptRequest(session_id=sid, prompt=blocks))
        assert answer.stop_reason == "end_turn"
        sent = json.dumps(r.llm.requests[-1]["messages"])
        assert [f"marker-{i}" in sent for i in range(6)] == [True] * 3 + [False] * 3
        assert sent.count("Attachment left out") == 3
        told = r.editor.text(sid)
        assert "Left out of this prompt" in told and "f3.txt" in told and "f5.txt" in told
        assert "f2.txt" not in told.split("Left out of this prompt")[1].split("seen")[0]


async def test_a_fifo_planted_while_the_edit_waits_is_not_written(tmp_path: Path) -> None:
    async with rig(tmp_path, caps=NO_CAPS) as r:
        target = r.workspace / "new.txt"
        r.editor.policy.hold = anyio.Event()
        sid = await r.new()
        r.llm.push(tool_call("w1", "write_file", path="new.txt", content="x\n"))
        r.llm.push({"text": "done"})
        answers: list[m.PromptResponse] = []

        async def run() -> None:
            answers.append(await r.prompt(sid, "write"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await r.editor.wait_for(lambda: bool(r.editor.policy.requests))
            os.mkfifo(target)  # planted while the approval is open
            r.editor.policy.hold.set()
        assert answers[0].stop_reason == "end_turn"
        assert ended(r, sid, "w1").status == "failed"
        assert "FIFO" in model_tool_result(r, "w1")
        assert stat.S_ISFIFO(target.lstat().st_mode)  # left as it was, never opened
        await still_serving(r, sid)
