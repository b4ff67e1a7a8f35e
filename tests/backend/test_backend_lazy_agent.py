"""Sessions build their agent off the request path: session/new and load answer first,
and the agent keeps the internal id recorded for it (no false rotation, same provenance)."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import pytest

from acp_v1 import models as m
from acpwire.agent.embedded.factory import DefaultAgentFactory
from acpwire.agent.seam import SyncAgent
from acpwire.server.app import Runtime
from tests.backend.harness import STEP_S, connected, make_settings, workspace_of
from tests.support.fake_llm import FakeLLM

pytestmark = pytest.mark.anyio


class CountingFactory(DefaultAgentFactory):
    """The real factory, counting the agents it builds; building waits for ``gate``, so
    a request that built its agent on the way to its answer would hang."""

    built = 0
    gate = threading.Event()

    def create(
        self, session_id: str, cwd: str, model: str | None, internal_id: str | None = None
    ) -> SyncAgent:
        assert CountingFactory.gate.wait(STEP_S), "the test never opened the gate"
        CountingFactory.built += 1
        return super().create(session_id, cwd, model, internal_id)


async def test_load_does_not_build_the_agent_and_the_first_prompt_does(tmp_path: Path) -> None:
    cwd = str(workspace_of(tmp_path))
    with FakeLLM() as llm:
        settings = make_settings(tmp_path / "home", llm.base_url)
        runtime = Runtime.create(settings)
        try:
            async with connected(runtime) as editor:
                new = await editor.peer.session_new(m.NewSessionRequest(cwd=cwd, mcp_servers=[]))
                await editor.peer.session_prompt(
                    m.PromptRequest(
                        session_id=new.session_id, prompt=[m.ContentBlockText(text="hi")]
                    )
                )
                first_meta = new.meta
        finally:
            runtime.close()
        CountingFactory.built = 0
        CountingFactory.gate.clear()
        restarted = Runtime.create(settings, CountingFactory(settings.file_values))
        try:
            async with connected(restarted) as editor:
                with anyio.fail_after(STEP_S / 2):  # the gate is shut: no build on the way
                    loaded = await editor.peer.session_load(
                        m.LoadSessionRequest(session_id=new.session_id, cwd=cwd, mcp_servers=[])
                    )
                assert CountingFactory.built == 0, "load built the agent"
                CountingFactory.gate.set()
                assert loaded.meta == first_meta  # same provenance chain after the restart
                result = await editor.peer.session_prompt(
                    m.PromptRequest(
                        session_id=new.session_id, prompt=[m.ContentBlockText(text="again")]
                    )
                )
                assert result.stop_reason == "end_turn"
                assert CountingFactory.built == 1
                infos = [
                    u
                    for u in editor.handler.updates[new.session_id]
                    if u.session_update == "session_info_update"
                    and "reason" in (u.meta or {}).get("hermes", {}).get("sessionProvenance", {})
                ]
                assert infos == [], "a restart must not look like a context compression"
        finally:
            restarted.close()
    assert "You said: again" in editor.handler.text(new.session_id)


async def test_new_answers_before_the_agent_is_built_and_it_keeps_the_recorded_id(
    tmp_path: Path,
) -> None:
    cwd = str(workspace_of(tmp_path))
    with FakeLLM() as llm:
        settings = make_settings(tmp_path / "home", llm.base_url)
        CountingFactory.built = 0
        CountingFactory.gate.clear()
        runtime = Runtime.create(settings, CountingFactory(settings.file_values))
        try:
            async with connected(runtime) as editor:
                with anyio.fail_after(STEP_S / 2):
                    new = await editor.peer.session_new(
                        m.NewSessionRequest(cwd=cwd, mcp_servers=[])
                    )
                assert CountingFactory.built == 0, "session/new built the agent"
                CountingFactory.gate.set()
                result = await editor.peer.session_prompt(
                    m.PromptRequest(
                        session_id=new.session_id, prompt=[m.ContentBlockText(text="hi")]
                    )
                )
                assert result.stop_reason == "end_turn"
                state = runtime.manager.peek(new.session_id)
                assert state is not None and CountingFactory.built == 1
                recorded = state.record.internal_id
                assert recorded is not None
                assert state.agent.internal_session_id == recorded  # the built agent's own
                assert runtime.manager.store.get_internal_session(recorded) is not None
        finally:
            runtime.close()
