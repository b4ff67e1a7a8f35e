"""Sessions survive the backend process: a killed acpwire, a new one on the same home.

Process 1 is killed with SIGKILL right after its prompt is answered (no clean shutdown,
as when an editor crashes). Process 2 must replay the stored conversation on
``session/load`` before answering it, and continue the conversation with its history.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from acp.schema import AgentMessageChunk, TextContentBlock, UserMessageChunk

from tests.stdio.sdk_client import EDITOR_CAPABILITIES, EDITOR_INFO, SdkEditor, spawn_acpwire
from tests.stdio.stdio_support import EXIT_TIMEOUT, STEP_TIMEOUT, JsonObject, write_home
from tests.support.fake_llm import FakeLLM

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

FIRST_QUESTION = "What is the capital of France?"
FIRST_ANSWER = "Paris, of course."
SECOND_QUESTION = "And of Italy?"


def _text(block: object) -> str:
    assert isinstance(block, TextContentBlock), block
    return block.text


def _chat(request: JsonObject) -> list[tuple[str, str]]:
    """(role, text) of each user/assistant message the model was sent."""
    result: list[tuple[str, str]] = []
    for message in request["messages"]:
        if message["role"] in ("user", "assistant"):
            content: Any = message.get("content") or ""
            if isinstance(content, list):
                content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            result.append((message["role"], str(content)))
    return result


async def test_load_after_a_killed_process_replays_then_continues(tmp_path: Path) -> None:
    work = (tmp_path / "work").resolve()
    work.mkdir()
    with FakeLLM([{"text": FIRST_ANSWER}, {"text": "Rome."}]) as llm:
        home = write_home(tmp_path / "home", llm.base_url)

        first = SdkEditor()
        async with spawn_acpwire(first, home, tmp_path / "stderr-1.log") as (conn, proc, _):
            with anyio.fail_after(STEP_TIMEOUT):
                await conn.initialize(
                    protocol_version=1,
                    client_capabilities=EDITOR_CAPABILITIES,
                    client_info=EDITOR_INFO,
                )
                sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
                answer = await conn.prompt(
                    session_id=sid, prompt=[TextContentBlock(type="text", text=FIRST_QUESTION)]
                )
            assert answer.stop_reason == "end_turn"
            assert first.text(sid) == FIRST_ANSWER
            proc.kill()
            with anyio.fail_after(EXIT_TIMEOUT):
                await proc.wait()
        assert proc.returncode != 0  # really killed, not shut down

        second = SdkEditor()
        async with spawn_acpwire(second, home, tmp_path / "stderr-2.log") as (conn, proc, wire):
            with anyio.fail_after(STEP_TIMEOUT):
                init = await conn.initialize(
                    protocol_version=1,
                    client_capabilities=EDITOR_CAPABILITIES,
                    client_info=EDITOR_INFO,
                )
                assert init.agent_capabilities is not None
                assert init.agent_capabilities.load_session is True
                listed = await conn.list_sessions()
                assert [s.session_id for s in listed.sessions] == [sid]
                loaded = await conn.load_session(cwd=str(work), session_id=sid, mcp_servers=[])
            assert loaded is not None

            # The replay, as the SDK typed it: the user's question, then the answer.
            replay = [
                (type(u).__name__, _text(u.content))
                for u in second.updates.get(sid, [])
                if isinstance(u, UserMessageChunk | AgentMessageChunk)
            ]
            assert replay == [
                ("UserMessageChunk", FIRST_QUESTION),
                ("AgentMessageChunk", FIRST_ANSWER),
            ]
            # On the wire, both chunks came before the session/load response.
            load_answer = wire.response_index("session/load")
            kinds_before = [
                m["params"]["update"]["sessionUpdate"]
                for m in wire.incoming[:load_answer]
                if m.get("method") == "session/update" and m["params"]["sessionId"] == sid
            ]
            assert kinds_before[:2] == ["user_message_chunk", "agent_message_chunk"]

            with anyio.fail_after(STEP_TIMEOUT):
                again = await conn.prompt(
                    session_id=sid, prompt=[TextContentBlock(type="text", text=SECOND_QUESTION)]
                )
            assert again.stop_reason == "end_turn"
            assert second.text(sid).endswith("Rome.")
        assert proc.returncode == 0

    assert len(llm.requests) == 2
    assert _chat(llm.requests[1]) == [
        ("user", FIRST_QUESTION),
        ("assistant", FIRST_ANSWER),
        ("user", SECOND_QUESTION),
    ]
