"""Slash commands handled by the backend, and the command list it advertises."""

from __future__ import annotations

from pathlib import Path

import pytest

from acpwire import __version__
from tests.backend.harness import Rig, rig

pytestmark = pytest.mark.anyio


async def reply(r: Rig, sid: str, text: str) -> str:
    """The one message a local command answers with."""
    before = len(r.editor.of_kind(sid, "agent_message_chunk"))
    requests = len(r.llm.requests)
    result = await r.prompt(sid, text)
    assert result.stop_reason == "end_turn"
    assert len(r.llm.requests) == requests, f"{text} must not reach the model"
    chunks = r.editor.of_kind(sid, "agent_message_chunk")[before:]
    assert len(chunks) == 1, chunks
    return str(chunks[0].content.text)


async def test_commands_are_advertised_after_session_new(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        sid = await r.new()
        await r.editor.wait_for(lambda: bool(r.editor.of_kind(sid, "available_commands_update")))
        (update,) = r.editor.of_kind(sid, "available_commands_update")
        names = {c.name for c in update.available_commands}
        expected = {"help", "model", "tools", "context", "reset", "compact", "steer", "queue"}
        assert expected | {"version", "approvals"} <= names


async def test_help_version_tools_context(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        sid = await r.new()
        text = await reply(r, sid, "/help")
        for name in ("/model", "/tools", "/context", "/reset", "/compact", "/steer", "/queue"):
            assert name in text
        assert await reply(r, sid, "/version") == (
            f"acpwire {__version__} (agent: acpwire default agent, model fake-model)"
        )
        tools = await reply(r, sid, "/tools")
        for name in ("read_file", "write_file", "patch", "search_files", "terminal", "todo"):
            assert f"  {name}: " in tools
        await r.prompt(sid, "hello")
        context = await reply(r, sid, "/context")
        assert "Messages: 2 (assistant: 1, user: 1)" in context
        assert "/ 32768 tokens" in context


async def test_model_switch(tmp_path: Path) -> None:
    async with rig(tmp_path, models=["fake-model", "other-model"]) as r:
        sid = await r.new()
        assert "Current model: fake-model" in await reply(r, sid, "/model")
        assert await reply(r, sid, "/model other-model") == "Model switched to: other-model"
        (update,) = r.editor.of_kind(sid, "config_option_update")
        current = {o.id: o.current_value for o in update.config_options}
        assert current["model"] == "other-model"
        await r.prompt(sid, "hi")
        assert r.llm.requests[-1]["model"] == "other-model"


async def test_reset_clears_the_history(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        sid = await r.new()
        await r.prompt(sid, "remember me")
        assert await reply(r, sid, "/reset") == "Conversation history cleared."
        await r.prompt(sid, "fresh")
        roles = [x["role"] for x in r.llm.requests[-1]["messages"]]
        assert roles == ["system", "user"]


@pytest.mark.parametrize("command", ["/compact", "/compress"])
async def test_compact_shrinks_the_history(tmp_path: Path, command: str) -> None:
    async with rig(tmp_path) as r:
        sid = await r.new()
        for n in range(4):
            await r.prompt(sid, f"message number {n} " + "padding " * 50)
        before = len(r.llm.requests)
        result = await r.prompt(sid, command)
        assert result.stop_reason == "end_turn"
        assert len(r.llm.requests) == before + 1  # the summary request
        text = r.editor.of_kind(sid, "agent_message_chunk")[-1].content.text
        assert text.startswith("Context compressed: 8 -> ")
        after = int(text.split("-> ")[1].split(" ")[0])
        assert after < 8
        await r.prompt(sid, "next")
        assert len(r.llm.requests[-1]["messages"]) == 1 + after + 1


async def test_steer_and_queue_when_idle_run_as_prompts(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        sid = await r.new()
        await r.prompt(sid, "/steer be brief")
        assert r.editor.text(sid).endswith("You said: be brief")
        await r.prompt(sid, "/queue do it later")
        assert r.editor.text(sid).endswith("You said: do it later")
        assert await reply(r, sid, "/queue") == "Usage: /queue <prompt>"
        assert await reply(r, sid, "/steer") == "Usage: /steer <guidance>"


async def test_unknown_command_goes_to_the_model(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        sid = await r.new()
        await r.prompt(sid, "/foo bar")
        assert r.editor.text(sid) == "You said: /foo bar"
        assert len(r.llm.requests) == 1
