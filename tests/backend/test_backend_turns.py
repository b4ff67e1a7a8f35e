"""Prompt turns through the backend with the real default agent and a scripted model:
streaming order, thoughts, title, usage, stop reasons and model errors."""

from __future__ import annotations

import base64
from pathlib import Path

import anyio
import pytest
from pydantic import TypeAdapter

from acp_v1 import models as m
from acpwire.rpc import RpcError
from tests.backend.harness import STEP_S, rig

pytestmark = pytest.mark.anyio


async def test_text_streams_before_the_answer(tmp_path: Path) -> None:
    slow = {"text": "one two three four five", "chunks": 5, "delay": 0.05}
    async with rig(tmp_path, [slow]) as r:
        sid = await r.new()
        answers: list[m.PromptResponse] = []

        async def run() -> None:
            answers.append(await r.prompt(sid, "count"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await r.editor.wait_for(lambda: bool(r.editor.of_kind(sid, "agent_message_chunk")))
            assert not answers, "the first chunk must arrive while the turn is running"
        assert answers[0].stop_reason == "end_turn"
        assert r.editor.text(sid) == "one two three four five"
        # Every chunk was flushed before the answer: nothing arrives afterwards.
        count = len(r.editor.updates[sid])
        await r.prompt(sid, "/version")
        later = r.editor.updates[sid][count:]
        assert all(
            u.session_update != "agent_message_chunk" or "acpwire" in u.content.text for u in later
        )


async def test_reasoning_title_and_usage(tmp_path: Path) -> None:
    reply = {
        "reasoning": "let me think",
        "text": "the answer",
        "usage": {"prompt_tokens": 100, "completion_tokens": 7},
    }
    async with rig(tmp_path, [reply, dict(reply)]) as r:
        sid = await r.new()
        first = await r.prompt(sid, "What is   the\nanswer?")
        assert r.editor.text(sid, "agent_thought_chunk") == "let me think"
        assert r.editor.text(sid) == "the answer"
        kinds = r.editor.kinds(sid)
        assert kinds.index("agent_thought_chunk") < kinds.index("agent_message_chunk")
        infos = r.editor.of_kind(sid, "session_info_update")
        assert [i.title for i in infos] == ["What is the answer?"]
        usage = r.editor.of_kind(sid, "usage_update")
        assert usage and usage[-1].size == 32768 and usage[-1].used > 0
        assert first.usage is not None
        assert (first.usage.input_tokens, first.usage.output_tokens) == (100, 7)
        second = await r.prompt(sid, "again")
        # Usage is per turn, not a running total; the title is not replaced.
        assert second.usage is not None and second.usage.input_tokens == 100
        assert len(r.editor.of_kind(sid, "session_info_update")) == 1


async def test_a_model_reporting_no_usage_gets_none_not_zeros(tmp_path: Path) -> None:
    async with rig(tmp_path, [{"text": "no counts"}]) as r:
        sid = await r.new()
        result = await r.prompt(sid, "go")
        assert result.stop_reason == "end_turn" and result.usage is None


@pytest.mark.parametrize(
    ("finish", "stop"),
    [("stop", "end_turn"), ("length", "max_tokens"), ("content_filter", "refusal")],
)
async def test_stop_reasons(tmp_path: Path, finish: str, stop: str) -> None:
    async with rig(tmp_path, [{"text": "partial", "finish_reason": finish}]) as r:
        sid = await r.new()
        assert (await r.prompt(sid, "go")).stop_reason == stop
        assert r.editor.text(sid) == "partial"


async def test_model_error_is_reported_and_session_stays_usable(tmp_path: Path) -> None:
    async with rig(tmp_path, [{"status": 500}]) as r:
        sid = await r.new()
        result = await r.prompt(sid, "first")
        assert result.stop_reason == "end_turn"
        text = r.editor.text(sid)
        assert text.startswith("Error: ") and "500" in text
        result = await r.prompt(sid, "second")
        assert result.stop_reason == "end_turn"
        assert "You said: second" in r.editor.text(sid)


async def test_empty_prompt_ends_at_once(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        sid = await r.new()
        assert (await r.prompt(sid, "   ")).stop_reason == "end_turn"
        assert r.llm.requests == []


async def test_max_turn_requests(tmp_path: Path) -> None:
    loop = [{"tool_calls": [{"id": f"c{i}", "name": "todo", "arguments": {}}]} for i in range(3)]
    async with rig(tmp_path, loop, extra={"max_iterations": 2}) as r:
        sid = await r.new()
        with anyio.fail_after(STEP_S):
            result = await r.prompt(sid, "loop")
        assert result.stop_reason == "max_turn_requests"
        ends = [u for u in r.editor.of_kind(sid, "tool_call_update") if u.status]
        assert {u.tool_call_id for u in ends} == {"c0", "c1"}


async def test_prompt_attachments_reach_the_model(tmp_path: Path) -> None:
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode()
    async with rig(tmp_path) as r:
        linked = r.workspace / "notes.txt"
        linked.write_text("linked file body")
        blocks = TypeAdapter(list[m.ContentBlock]).validate_python(
            [
                {"type": "text", "text": "look at these"},
                {"type": "resource_link", "name": "notes.txt", "uri": linked.as_uri()},
                {
                    "type": "resource",
                    "resource": {"uri": "file:///virtual/a.py", "text": "embedded body"},
                },
                {"type": "image", "mimeType": "image/png", "data": png},
                {"type": "resource_link", "name": "web", "uri": "https://example.com/x"},
            ]
        )
        sid = await r.new()
        with anyio.fail_after(STEP_S):
            result = await r.peer.session_prompt(m.PromptRequest(session_id=sid, prompt=blocks))
        assert result.stop_reason == "end_turn"
        parts = r.llm.requests[-1]["messages"][-1]["content"]
        assert isinstance(parts, list)
        text = "\n".join(p["text"] for p in parts if p["type"] == "text")
        for expected in ("look at these", "linked file body", "embedded body", "example.com"):
            assert expected in text
        (image,) = [p for p in parts if p["type"] == "image_url"]
        assert image["image_url"]["url"] == f"data:image/png;base64,{png}"
        (title,) = r.editor.of_kind(sid, "session_info_update")
        assert title.title is not None and title.title.startswith("look at these")


async def test_half_an_emoji_never_breaks_a_session(tmp_path: Path) -> None:
    """A lone UTF-16 surrogate (half an emoji, from a model or a JavaScript client) is
    stored, streamed and replayed; the session keeps working."""
    async with rig(tmp_path, [{"text": "half \ud83d emoji"}, {"text": "fine"}]) as r:
        sid = await r.new()
        first = await r.prompt(sid, "say it \udc00")
        assert first.stop_reason == "end_turn"
        assert r.editor.text(sid) == "half \ud83d emoji"
        assert (await r.prompt(sid, "again")).stop_reason == "end_turn"
        sent = r.llm.requests[-1]["messages"]
        assert [x["content"] for x in sent[1:]] == [
            "say it \udc00",
            "half \ud83d emoji",
            "again",
        ]
        seen = len(r.editor.of_kind(sid, "user_message_chunk"))
        with anyio.fail_after(STEP_S):
            await r.peer.session_load(
                m.LoadSessionRequest(session_id=sid, cwd=str(r.workspace), mcp_servers=[])
            )
        replayed = [u.content.text for u in r.editor.of_kind(sid, "user_message_chunk")[seen:]]
        assert replayed == ["say it \udc00", "again"]
        # An id with half an emoji names no session: -32002, not an internal error.
        with anyio.fail_after(STEP_S), pytest.raises(RpcError) as info:
            await r.peer.session_load(
                m.LoadSessionRequest(session_id="s\ud83d", cwd=str(r.workspace), mcp_servers=[])
            )
        assert info.value.code == -32002
