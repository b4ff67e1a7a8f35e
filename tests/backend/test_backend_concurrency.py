"""Sixteen sessions prompting at once: every update reaches its own session only."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from acp_v1 import models as m
from tests.backend.harness import STEP_S, rig, tool_texts

pytestmark = pytest.mark.anyio

SESSIONS = 16


def marker(n: int) -> str:
    return f"<session-{n:02d}>"


async def test_sixteen_sessions_at_once(tmp_path: Path) -> None:
    # Slow, chunked replies so the streams really interleave.
    rules = [
        {"match": marker(n), "text": f"{marker(n)} says " * 6, "chunks": 6, "delay": 0.02}
        for n in range(SESSIONS)
    ]
    async with rig(tmp_path, rules=rules) as r:
        folders = []
        for n in range(SESSIONS):
            folder = tmp_path / f"project-{n:02d}"
            folder.mkdir()
            folders.append(folder)
        sids = [await r.new(folder) for folder in folders]
        stops: dict[int, m.StopReason] = {}

        async def run(n: int) -> None:
            stops[n] = (await r.prompt(sids[n], f"hello from {marker(n)}")).stop_reason

        async with anyio.create_task_group() as tg:
            for n in range(SESSIONS):
                tg.start_soon(run, n)
        assert stops == dict.fromkeys(range(SESSIONS), "end_turn")
        for n, sid in enumerate(sids):
            assert r.editor.text(sid) == f"{marker(n)} says " * 6
            everything = " ".join(str(u.model_dump()) for u in r.editor.updates[sid])
            others = [marker(k) for k in range(SESSIONS) if k != n]
            assert not [o for o in others if o in everything]
            (title,) = r.editor.of_kind(sid, "session_info_update")
            assert title.title == f"hello from {marker(n)}"
        # Each request carried its own session's working directory.
        for n in range(SESSIONS):
            (request,) = [q for q in r.llm.requests if marker(n) in str(q["messages"][-1])]
            assert str(folders[n].resolve()) in request["messages"][0]["content"]


async def test_concurrent_tool_calls_use_their_own_cwd(tmp_path: Path) -> None:
    rules = [
        {
            "match": marker(n),
            "times": 1,
            "tool_calls": [{"id": f"pwd-{n}", "name": "terminal", "arguments": {"command": "pwd"}}],
        }
        for n in range(SESSIONS)
    ]
    async with rig(tmp_path, rules=rules) as r:
        folders = []
        for n in range(SESSIONS):
            folder = tmp_path / f"cwd-{n:02d}"
            folder.mkdir()
            folders.append(folder.resolve())
        sids = [await r.new(folder) for folder in folders]

        async def run(n: int) -> None:
            await r.prompt(sids[n], f"where am I {marker(n)}")

        async with anyio.create_task_group() as tg:
            for n in range(SESSIONS):
                tg.start_soon(run, n)
        for n, sid in enumerate(sids):
            (end,) = [u for u in r.editor.of_kind(sid, "tool_call_update") if u.status]
            assert (end.tool_call_id, end.status) == (f"pwd-{n}", "completed")
            words = tool_texts(end.content).split()
            assert [w for w in words if w.startswith(str(tmp_path.resolve()))] == [str(folders[n])]


async def test_busy_turns_do_not_block_other_requests(tmp_path: Path) -> None:
    # Both turn threads of the pool wait for an approval; the rest must still answer.
    async with rig(tmp_path, workers=2) as r:
        r.editor.policy.hold = anyio.Event()
        sids = [await r.new(), await r.new()]
        for n in range(len(sids)):
            r.llm.add_rule(
                {
                    "match": marker(n),
                    "times": 1,
                    "tool_calls": [
                        {
                            "id": f"w{n}",
                            "name": "write_file",
                            "arguments": {"path": f"f{n}.txt", "content": "x"},
                        }
                    ],
                }
            )
        async with anyio.create_task_group() as tg:
            for n, sid in enumerate(sids):
                tg.start_soon(r.prompt, sid, f"edit {marker(n)}")
            await r.editor.wait_for(lambda: len(r.editor.policy.requests) == 2)
            third = await r.new()
            with anyio.fail_after(STEP_S):
                listed = await r.peer.session_list(m.ListSessionsRequest())
            # ``third`` has no conversation yet: not listed.
            assert {s.session_id for s in listed.sessions} == set(sids)
            assert third not in {s.session_id for s in listed.sessions}
            r.editor.policy.hold.set()
        assert (r.workspace / "f0.txt").read_text() == "x"
        assert (r.workspace / "f1.txt").read_text() == "x"
