"""Restored sessions build their agent only when it must work: load and list stay fast,
and the agent resumes the stored internal id (no false rotation after a restart)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_v1 import models as m
from acpwire.agent.seam import SyncAgent
from acpwire.agents import DefaultAgentFactory
from acpwire.server.app import Runtime
from tests.backend.harness import connected, make_settings, workspace_of
from tests.support.fake_llm import FakeLLM

pytestmark = pytest.mark.anyio


class CountingFactory(DefaultAgentFactory):
    """The real factory, counting the agents it builds."""

    built = 0

    def create(
        self, session_id: str, cwd: str, model: str | None, internal_id: str | None = None
    ) -> SyncAgent:
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
        restarted = Runtime.create(settings, CountingFactory(settings.file_values))
        try:
            async with connected(restarted) as editor:
                loaded = await editor.peer.session_load(
                    m.LoadSessionRequest(session_id=new.session_id, cwd=cwd, mcp_servers=[])
                )
                assert CountingFactory.built == 0, "load built the agent"
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
                    if u.session_update == "session_info_update" and u.meta
                ]
                assert infos == [], "a restart must not look like a context compression"
        finally:
            restarted.close()
    assert "You said: again" in editor.handler.text(new.session_id)
