"""A first end-to-end conversation through the backend with the real default agent."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from acp_v1 import models as m
from acpwire.server.app import Runtime
from tests.backend.harness import connected, make_settings
from tests.support.fake_llm import FakeLLM

pytestmark = pytest.mark.anyio


async def test_new_prompt_streams_text_before_the_answer(tmp_path: Path) -> None:
    with FakeLLM() as llm:
        runtime = Runtime.create(make_settings(tmp_path / "home", llm.base_url))
        try:
            async with connected(runtime) as editor:
                with anyio.fail_after(20):
                    new = await editor.peer.session_new(
                        m.NewSessionRequest(cwd=str(tmp_path), mcp_servers=[])
                    )
                    result = await editor.peer.session_prompt(
                        m.PromptRequest(
                            session_id=new.session_id,
                            prompt=[m.ContentBlockText(text="hello there")],
                        )
                    )
                assert result.stop_reason == "end_turn"
                sid = new.session_id
                assert "You said: hello there" in editor.handler.text(sid)
                assert "usage_update" in editor.handler.kinds(sid)
        finally:
            runtime.close()
