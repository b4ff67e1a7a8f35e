"""Text deltas that arrive faster than the editor reads are joined, never reordered or lost."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from acp_v1 import models as m
from acpwire.server.app import Runtime
from tests.backend.harness import STEP_S, EditorClient, connected, make_settings, workspace_of
from tests.support.fake_llm import FakeLLM

pytestmark = pytest.mark.anyio

DELTAS = 400


class SlowEditor(EditorClient):
    """An editor that takes a moment over every update (a busy UI thread)."""

    async def session_update(self, params: m.SessionNotification) -> None:
        await anyio.sleep(0.002)
        await super().session_update(params)


async def test_fast_deltas_to_a_slow_editor_are_joined_in_order(tmp_path: Path) -> None:
    text = "".join(f"<{i:03d}>" for i in range(DELTAS))
    with FakeLLM([{"text": text, "chunks": DELTAS}]) as llm:
        runtime = Runtime.create(make_settings(tmp_path / "home", llm.base_url))
        try:
            async with connected(runtime, editor=SlowEditor) as client:
                with anyio.fail_after(STEP_S * 3):
                    new = await client.peer.session_new(
                        m.NewSessionRequest(cwd=str(workspace_of(tmp_path)), mcp_servers=[])
                    )
                    done = await client.peer.session_prompt(
                        m.PromptRequest(
                            session_id=new.session_id, prompt=[m.ContentBlockText(text="go")]
                        )
                    )
                assert done.stop_reason == "end_turn"
                chunks = [
                    u
                    for u in client.handler.updates[new.session_id]
                    if u.session_update == "agent_message_chunk"
                ]
                assert client.handler.text(new.session_id) == text  # nothing lost or reordered
                assert len(chunks) < DELTAS / 2, f"{len(chunks)} chunks: deltas were not joined"
        finally:
            runtime.close()
