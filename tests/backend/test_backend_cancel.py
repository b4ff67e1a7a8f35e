"""``session/cancel`` and the prompt queue: a cancel ends the turn promptly, an idle cancel
changes nothing, queued prompts run after a normal turn and never after a cancelled one."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from acp_v1 import models as m
from acpwire.agent.embedded.default import DefaultAgent
from acpwire.agent.embedded.factory import DefaultAgentFactory
from acpwire.agent.seam import SyncAgent
from acpwire.server.app import Runtime
from tests.backend.harness import Rig, connected, make_settings, rig, tool_call, workspace_of
from tests.support.fake_llm import FakeLLM

pytestmark = pytest.mark.anyio

CANCEL_BOUND_S = 5.0
"""A cancel must end the turn well within this (the backend's grace period is 3 s)."""
SLOW = {"text": "x" * 40, "chunks": 40, "delay": 0.25}


class Turn:
    """A prompt running in the background of a task group."""

    def __init__(self, r: Rig, sid: str, text: str) -> None:
        self.r, self.sid, self.text = r, sid, text
        self.answer: m.PromptResponse | None = None
        self.done = anyio.Event()

    async def run(self) -> None:
        try:
            self.answer = await self.r.prompt(self.sid, self.text)
        finally:
            self.done.set()

    async def finished(self, bound: float = CANCEL_BOUND_S) -> m.PromptResponse:
        with anyio.fail_after(bound):
            await self.done.wait()
        assert self.answer is not None
        return self.answer


def chunks(r: Rig, sid: str) -> list[str]:
    return [u.content.text for u in r.editor.of_kind(sid, "agent_message_chunk")]


async def test_cancel_during_a_slow_stream(tmp_path: Path) -> None:
    async with rig(tmp_path, [SLOW]) as r:
        sid = await r.new()
        turn = Turn(r, sid, "talk slowly")
        async with anyio.create_task_group() as tg:
            tg.start_soon(turn.run)
            await r.editor.wait_for(lambda: bool(chunks(r, sid)))
            await r.cancel(sid)
            assert (await turn.finished()).stop_reason == "cancelled"
        assert len(r.editor.text(sid)) < 40
        # The partial reply is kept in the history the model sees next.
        assert (await r.prompt(sid, "again")).stop_reason == "end_turn"
        history = r.llm.requests[-1]["messages"]
        assert [x["role"] for x in history[1:]] == ["user", "assistant", "user"]
        assert history[2]["content"].startswith("x")


async def test_idle_cancel_is_harmless(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        sid = await r.new()
        await r.cancel(sid)
        await r.cancel(sid)
        result = await r.prompt(sid, "hello")
        assert result.stop_reason == "end_turn"
        assert r.editor.text(sid) == "You said: hello"
        await r.cancel(sid)
        assert (await r.prompt(sid, "/foo bar")).stop_reason == "end_turn"
        assert r.editor.text(sid).endswith("You said: /foo bar")


async def test_queued_prompt_runs_after_the_turn_in_the_same_request(tmp_path: Path) -> None:
    async with rig(tmp_path, [{"text": "slow reply", "chunks": 4, "delay": 0.2}]) as r:
        sid = await r.new()
        first = Turn(r, sid, "first")
        async with anyio.create_task_group() as tg:
            tg.start_soon(first.run)
            await r.editor.wait_for(lambda: bool(chunks(r, sid)))
            queued = await r.prompt(sid, "second")
            assert queued.stop_reason == "end_turn"
            assert "Queued for the next turn. (1 queued)" in chunks(r, sid)
            assert (await first.finished(15)).stop_reason == "end_turn"
        echoed = [u.content.text for u in r.editor.of_kind(sid, "user_message_chunk")]
        assert echoed == ["second"]
        assert r.editor.text(sid).endswith("You said: second")
        kinds = r.editor.kinds(sid)
        assert kinds.index("user_message_chunk") < len(kinds) - 1


async def test_cancel_drops_queued_prompts(tmp_path: Path) -> None:
    async with rig(tmp_path, [SLOW]) as r:
        sid = await r.new()
        first = Turn(r, sid, "first")
        async with anyio.create_task_group() as tg:
            tg.start_soon(first.run)
            await r.editor.wait_for(lambda: bool(chunks(r, sid)))
            await r.prompt(sid, "queued one")
            await r.prompt(sid, "/queue queued two")
            assert any("(2 queued)" in c for c in chunks(r, sid))
            await r.cancel(sid)
            assert (await first.finished()).stop_reason == "cancelled"
        assert len(r.llm.requests) == 1
        assert r.editor.of_kind(sid, "user_message_chunk") == []
        assert (await r.prompt(sid, "after")).stop_reason == "end_turn"
        assert r.editor.text(sid).endswith("You said: after")


async def test_steer_reaches_the_running_turn(tmp_path: Path) -> None:
    script = [tool_call("s1", "terminal", command="sleep 0.5"), {"text": "done"}]
    async with rig(tmp_path, script) as r:
        sid = await r.new()
        turn = Turn(r, sid, "work")
        async with anyio.create_task_group() as tg:
            tg.start_soon(turn.run)
            await r.editor.wait_for(lambda: bool(r.editor.of_kind(sid, "tool_call")))
            await r.prompt(sid, "/steer use tabs")
            assert any("Steer queued for the active turn" in c for c in chunks(r, sid))
            assert (await turn.finished(15)).stop_reason == "end_turn"
        tool_result = r.llm.requests[-1]["messages"][-1]
        assert "use tabs" in tool_result["content"]


async def test_cancel_while_the_editor_answers_cancelled(tmp_path: Path) -> None:
    # A compliant editor answers pending permission requests "cancelled" when it cancels.
    async with rig(tmp_path) as r:
        r.editor.policy.hold = anyio.Event()
        sid = await r.new()
        r.llm.push(tool_call("w1", "write_file", path="a.txt", content="x"))
        turn = Turn(r, sid, "write")
        async with anyio.create_task_group() as tg:
            tg.start_soon(turn.run)
            await r.editor.wait_for(lambda: bool(r.editor.policy.requests))
            await r.cancel(sid)
            r.editor.policy.answer = "cancelled"
            r.editor.policy.hold.set()
            assert (await turn.finished()).stop_reason == "cancelled"
        assert not (r.workspace / "a.txt").exists()
        ends = [u for u in r.editor.of_kind(sid, "tool_call_update") if u.status]
        assert [(u.tool_call_id, u.status) for u in ends] == [("w1", "failed")]
        assert len(r.llm.requests) == 1


async def test_cancel_while_the_editor_never_answers_the_permission(tmp_path: Path) -> None:
    async with rig(tmp_path, approval_timeout=60) as r:
        r.editor.policy.answer = None
        sid = await r.new()
        r.llm.push(tool_call("w1", "write_file", path="a.txt", content="x"))
        turn = Turn(r, sid, "write")
        async with anyio.create_task_group() as tg:
            tg.start_soon(turn.run)
            await r.editor.wait_for(lambda: bool(r.editor.policy.requests))
            await r.cancel(sid)
            assert (await turn.finished()).stop_reason == "cancelled"
        assert not (r.workspace / "a.txt").exists()
        ends = [u for u in r.editor.of_kind(sid, "tool_call_update") if u.status]
        assert [(u.tool_call_id, u.status) for u in ends] == [("w1", "failed")]
        assert (await r.prompt(sid, "next")).stop_reason == "end_turn"


async def test_steer_after_a_cancel_resumes_the_interrupted_prompt(tmp_path: Path) -> None:
    async with rig(tmp_path, [SLOW]) as r:
        sid = await r.new()
        turn = Turn(r, sid, "write the report")
        async with anyio.create_task_group() as tg:
            tg.start_soon(turn.run)
            await r.editor.wait_for(lambda: bool(chunks(r, sid)))
            await r.cancel(sid)
            assert (await turn.finished()).stop_reason == "cancelled"
        assert (await r.prompt(sid, "/steer use markdown")).stop_reason == "end_turn"
        last_user = r.llm.requests[-1]["messages"][-1]["content"]
        assert last_user == (
            "write the report\n\nUser correction/guidance after interrupt: use markdown"
        )
        # Only once: a later /steer is an ordinary prompt.
        await r.prompt(sid, "/steer plain")
        assert r.llm.requests[-1]["messages"][-1]["content"] == "plain"


async def test_cancel_then_prompt_runs_the_new_prompt_after_the_cancelled_turn(
    tmp_path: Path,
) -> None:
    """An editor's "send now" is a cancel followed at once by a prompt: that prompt is
    not parked in the queue of the turn being cancelled; it gets a turn of its own."""
    async with rig(tmp_path, [SLOW]) as r:
        sid = await r.new()
        first = Turn(r, sid, "talk slowly")
        async with anyio.create_task_group() as tg:
            tg.start_soon(first.run)
            await r.editor.wait_for(lambda: bool(chunks(r, sid)))
            await r.cancel(sid)
            with anyio.fail_after(CANCEL_BOUND_S + 5):
                now = await r.prompt(sid, "do this instead")
            assert (await first.finished()).stop_reason == "cancelled"
        assert now.stop_reason == "end_turn"
        assert r.editor.text(sid).endswith("You said: do this instead")
        assert not any("Queued for the next turn" in c for c in chunks(r, sid))
        history = r.llm.requests[-1]["messages"]
        assert [x["role"] for x in history[1:]] == ["user", "assistant", "user"]


async def test_a_request_cancelled_before_its_worker_started_leaves_the_session_usable(
    tmp_path: Path,
) -> None:
    """With the only worker thread busy, a prompt of another session waits for it; the
    client gives up on that request ($/cancel_request). Its turn never ran, and the
    session's next prompt is not held up waiting for it."""
    slow = {"match": "busy", "text": "y" * 20, "chunks": 20, "delay": 0.1}
    async with rig(tmp_path, rules=[slow], workers=1) as r:
        busy, other = await r.new(), await r.new()
        first = Turn(r, busy, "busy for a while")
        async with anyio.create_task_group() as tg:
            tg.start_soon(first.run)
            await r.editor.wait_for(lambda: bool(chunks(r, busy)))
            with anyio.move_on_after(0.3) as scope:
                await r.peer.session_prompt(
                    m.PromptRequest(session_id=other, prompt=[m.ContentBlockText(text="gone")])
                )
            assert scope.cancelled_caught  # it waited for the worker; we gave up
            assert (await first.finished(15)).stop_reason == "end_turn"
        with anyio.fail_after(10):
            result = await r.prompt(other, "still there?")
        assert result.stop_reason == "end_turn"
        assert r.editor.text(other).endswith("You said: still there?")


class _Deaf(DefaultAgent):
    """A real agent that ignores interrupts (a tool stuck in a system call, say)."""

    def interrupt(self) -> None:
        return None


class _DeafFactory(DefaultAgentFactory):
    def create(
        self, session_id: str, cwd: str, model: str | None, internal_id: str | None = None
    ) -> SyncAgent:
        agent = super().create(session_id, cwd, model, internal_id)
        assert isinstance(agent, DefaultAgent)
        agent.__class__ = _Deaf
        return agent


async def test_a_prompt_behind_an_abandoned_worker_is_cancelled_at_once(tmp_path: Path) -> None:
    """The first turn ignores its cancel and is abandoned after the grace period while
    its worker still runs; a second prompt waits for that worker, and a cancel for it is
    answered at once, not when the stuck worker finally ends."""
    stuck = {"text": "y" * 25, "chunks": 25, "delay": 0.2}  # 5 s of streaming
    with FakeLLM([stuck]) as llm:
        settings = make_settings(tmp_path / "home", llm.base_url)
        runtime = Runtime.create(settings, factory=_DeafFactory(settings.file_values))
        try:
            async with connected(runtime) as client:
                peer = client.peer
                new = await peer.session_new(
                    m.NewSessionRequest(cwd=str(workspace_of(tmp_path)), mcp_servers=[])
                )
                sid = new.session_id

                async def prompt(text: str) -> m.PromptResponse:
                    return await peer.session_prompt(
                        m.PromptRequest(session_id=sid, prompt=[m.ContentBlockText(text=text)])
                    )

                answers: list[str] = []

                async def second() -> None:
                    answers.append(str((await prompt("second")).stop_reason))

                async with anyio.create_task_group() as tg:
                    first = Turn(Rig(llm, runtime, client, workspace_of(tmp_path)), sid, "first")
                    tg.start_soon(first.run)
                    await client.handler.wait_for(lambda: bool(chunks(first.r, sid)))
                    await peer.session_cancel(m.CancelNotification(session_id=sid))
                    assert (await first.finished()).stop_reason == "cancelled"  # abandoned
                    tg.start_soon(second)
                    await anyio.sleep(0.3)  # it waits for the stuck worker
                    assert answers == []
                    started = anyio.current_time()
                    await peer.session_cancel(m.CancelNotification(session_id=sid))
                    with anyio.fail_after(2):
                        while not answers:
                            await anyio.sleep(0.02)
                    assert answers == ["cancelled"]
                    assert anyio.current_time() - started < 1.0
        finally:
            runtime.close()
