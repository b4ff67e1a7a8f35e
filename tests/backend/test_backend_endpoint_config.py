"""What the endpoint reports fills what the configuration leaves out: the model (the first
listed, looked up in the background) and the context window (``context_length``)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from acp_v1 import models as m
from acpwire.config import Settings
from acpwire.server.app import Runtime
from tests.backend.harness import connected, workspace_of
from tests.support.fake_llm import FakeLLM

pytestmark = pytest.mark.anyio


async def _usage_sizes(tmp_path: Path, llm: FakeLLM, values: dict[str, object]) -> list[int]:
    settings = Settings(home=tmp_path / "home", file_values={"base_url": llm.base_url, **values})
    runtime = Runtime.create(settings)
    try:
        async with connected(runtime) as client:
            new = await client.peer.session_new(
                m.NewSessionRequest(cwd=str(workspace_of(tmp_path)), mcp_servers=[])
            )
            editor = client.handler
            await editor.wait_for(lambda: bool(editor.of_kind(new.session_id, "usage_update")))
            state = runtime.manager.peek(new.session_id)
            assert state is not None and state.agent.model == "listed-first"
            return [u.size for u in editor.of_kind(new.session_id, "usage_update")]
    finally:
        runtime.close()


async def test_the_endpoint_context_length_is_the_usage_size(tmp_path: Path) -> None:
    with FakeLLM(models=["listed-first", "other"], context_length=131072) as llm:
        assert await _usage_sizes(tmp_path, llm, {}) == [131072]


async def test_a_configured_context_window_wins_over_the_endpoint(tmp_path: Path) -> None:
    with FakeLLM(models=["listed-first"], context_length=131072) as llm:
        assert await _usage_sizes(tmp_path, llm, {"context_window": 65536}) == [65536]


async def test_the_first_prompt_title_is_sent_once(tmp_path: Path) -> None:
    """The first prompt follows the session/new answer at once, while the updates that
    follow the answer still wait for the endpoint (here: its model list, held)."""
    with FakeLLM([{"text": "hi"}], models=["listed-first"], context_length=65536) as llm:
        llm.models_open.clear()
        settings = Settings(
            home=tmp_path / "home", file_values={"base_url": llm.base_url, "model": "listed-first"}
        )
        runtime = Runtime.create(settings)
        try:
            async with connected(runtime) as client:
                new = await client.peer.session_new(
                    m.NewSessionRequest(cwd=str(workspace_of(tmp_path)), mcp_servers=[])
                )
                sid, editor = new.session_id, client.handler
                prompt = m.PromptRequest(session_id=sid, prompt=[m.ContentBlockText(text="hey")])
                async with anyio.create_task_group() as tg:
                    tg.start_soon(client.peer.session_prompt, prompt)
                    await editor.wait_for(lambda: bool(editor.of_kind(sid, "session_info_update")))
                    llm.models_open.set()
                await editor.wait_for(lambda: bool(editor.of_kind(sid, "usage_update")))
                await client.peer.session_prompt(
                    m.PromptRequest(session_id=sid, prompt=[m.ContentBlockText(text="again")])
                )
                assert [i.title for i in editor.of_kind(sid, "session_info_update")] == ["hey"]
        finally:
            runtime.close()
