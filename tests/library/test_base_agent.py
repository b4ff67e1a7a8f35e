"""``BaseAgent``: an agent that writes only its turn works in the full backend; interrupts
reach only the turn they hit."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_v1 import models as m
from acpwire import BaseAgent, Message, SessionContext, ToolEnd, ToolStart, TurnHooks, TurnResult
from acpwire.agent.factory import FunctionFactory
from acpwire.server.app import Runtime
from tests.backend.harness import STEP_S, connected, make_settings, workspace_of

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Waiter(BaseAgent):
    """Streams a word, then waits until interrupted (or released)."""

    def __init__(self, context: SessionContext) -> None:
        super().__init__(context)
        self.started = threading.Event()
        self.release = threading.Event()

    def turns_running(self) -> int:
        return self._turns

    def run_turn(
        self, content: Any, history: list[Message], *, cwd: str, hooks: TurnHooks
    ) -> TurnResult:
        hooks.on_text_delta("thinking ")
        hooks.on_tool_start(ToolStart("c1", "look", {"at": cwd}))
        hooks.on_tool_end(ToolEnd("c1", "look", {"at": cwd}, result="seen"))
        self.started.set()
        while not self.interrupted and not self.release.is_set():
            self.release.wait(0.01)
        hooks.on_text_delta("done")
        return self.reply(content, history, "thinking done")


def _context() -> SessionContext:
    return SessionContext(session_id="s", cwd="/w", model=None, internal_id="i")


def test_an_interrupt_while_idle_does_not_stop_the_next_turn() -> None:
    agent = Waiter(_context())
    agent.interrupt()  # idle: nothing runs
    assert not agent.interrupted
    agent.release.set()

    class Hooks:
        def __getattr__(self, name: str) -> Any:
            return lambda *args: None

    result = agent.run_turn("hi", [], cwd="/w", hooks=Hooks())
    assert result.stop == "end_turn" and result.final_text == "thinking done"
    assert result.messages == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "thinking done"},
    ]


def test_defaults_of_everything_but_the_turn() -> None:
    agent = Waiter(_context())
    history: list[Message] = [{"role": "user", "content": "x" * 40}]
    assert agent.compress(history, force=True) is history
    assert agent.context_usage(history) == (10, 0)
    assert (agent.steer("go"), agent.tool_descriptions(), agent.model) == (False, [], "default")
    agent.set_model("other")
    agent.set_reasoning_effort("high")
    assert (agent.model, agent.reasoning_effort) == ("other", "high")


async def test_a_base_agent_in_the_full_backend_streams_and_is_cancelled(tmp_path: Path) -> None:
    agents: list[Waiter] = []

    def build(context: SessionContext) -> Waiter:
        agents.append(Waiter(context))
        return agents[-1]

    settings = make_settings(tmp_path / "home", None)
    runtime = Runtime.create(settings, FunctionFactory(build, name="waiter agent"))
    try:
        async with connected(runtime) as client:
            peer, editor = client.peer, client.handler
            cwd = str(workspace_of(tmp_path))
            with anyio.fail_after(STEP_S):
                new = await peer.session_new(m.NewSessionRequest(cwd=cwd, mcp_servers=[]))
            sid = new.session_id
            assert agents[0].context == SessionContext(sid, cwd, None, sid)
            answers: list[m.PromptResponse] = []

            async def prompt(text: str) -> None:
                request = m.PromptRequest(session_id=sid, prompt=[m.ContentBlockText(text=text)])
                answers.append(await peer.session_prompt(request))

            with anyio.fail_after(STEP_S):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(prompt, "wait")
                    await anyio.to_thread.run_sync(agents[0].started.wait)
                    await peer.session_cancel(m.CancelNotification(session_id=sid))
            assert answers[0].stop_reason == "cancelled"
            kinds = editor.kinds(sid)
            assert "tool_call" in kinds and "tool_call_update" in kinds
            assert editor.text(sid).startswith("thinking ")
            # The next turn is not stopped by the cancel of the last one.
            with anyio.fail_after(STEP_S):
                while agents[0].turns_running():
                    await anyio.sleep(0.01)
            assert not agents[0].interrupted
            agents[0].release.set()
            with anyio.fail_after(STEP_S):
                await prompt("again")
                await prompt("/version")
            assert answers[1].stop_reason == "end_turn"
            assert "agent: waiter agent" in editor.text(sid)
    finally:
        runtime.close()
