"""Slash commands handled by the backend, and the command list it advertises."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import anyio
import pytest

from acp_v1 import models as m
from acpwire import __version__
from tests.backend.harness import STEP_S, Rig, rig

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
            assert f"- `{name}`: " in tools
        await r.prompt(sid, "hello")
        context = await reply(r, sid, "/context")
        assert "Messages: 2 (assistant: 1, user: 1)" in context
        assert "/ 32768 tokens" in context


def runs_together(text: str) -> list[tuple[str, str]]:
    """Pairs of adjacent lines a Markdown renderer joins into one paragraph (a single
    newline between two lines that are not both list items)."""
    lines = text.split("\n")
    return [
        (a, b)
        for a, b in pairwise(lines)
        if a.strip() and b.strip() and not (a.startswith("- ") and b.startswith("- "))
    ]


async def test_replies_are_markdown_paragraphs_and_lists(tmp_path: Path) -> None:
    async with rig(tmp_path, models=["fake-model", "other-model"]) as r:
        sid = await r.new()
        await r.prompt(sid, "hello")
        for command in (
            "/help",
            "/tools",
            "/context",
            "/model",
            "/model other-model",
            "/approvals",
        ):
            text = await reply(r, sid, command)
            assert "\n" in text, command
            assert runs_together(text) == [], command


async def test_model_switch(tmp_path: Path) -> None:
    async with rig(tmp_path, models=["fake-model", "other-model"]) as r:
        sid = await r.new()
        assert "Current model: fake-model" in await reply(r, sid, "/model")
        switched = await reply(r, sid, "/model other-model")
        assert switched.startswith("Model switched to: other-model\n\nProvider: ")
        (update,) = r.editor.of_kind(sid, "config_option_update")
        current = {o.id: o.current_value for o in update.config_options}
        assert current["model"] == "other-model"
        await r.prompt(sid, "hi")
        assert r.llm.requests[-1]["model"] == "other-model"
        assert await reply(r, sid, "/model  ") == switched.replace(
            "Model switched to", "Current model"
        )


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


async def test_a_prompt_during_compact_is_queued_and_kept(tmp_path: Path) -> None:
    """The session is busy while /compact summarises: a prompt sent meanwhile is queued,
    runs after the compaction, and its exchange stays in the (compacted) history."""
    async with rig(tmp_path) as r:
        sid = await r.new()
        for n in range(4):
            await r.prompt(sid, f"message number {n} " + "padding " * 50)
        before = len(r.llm.requests)
        r.llm.push({"text": "A summary.", "initial_delay": 1.0})
        results: list[m.PromptResponse] = []
        async with anyio.create_task_group() as tg:

            async def compact() -> None:
                results.append(await r.prompt(sid, "/compact"))

            tg.start_soon(compact)
            with anyio.fail_after(STEP_S):
                while len(r.llm.requests) == before:  # the summary request is out
                    await anyio.sleep(0.01)
            during = await r.prompt(sid, "sent during compaction")
            assert during.stop_reason == "end_turn"
            assert r.editor.text(sid).endswith("Queued for the next turn. (1 queued)")
        assert [x.stop_reason for x in results] == ["end_turn"]
        assert r.editor.text(sid).endswith("You said: sent during compaction")
        await r.prompt(sid, "next")
        users = [x["content"] for x in r.llm.requests[-1]["messages"] if x["role"] == "user"]
        assert "sent during compaction" in users


async def test_cancel_during_compact_leaves_no_prompt_for_steer(tmp_path: Path) -> None:
    """A cancel while /compact runs interrupts no turn: a later /steer is a plain prompt,
    not a replay of the last finished one."""
    async with rig(tmp_path) as r:
        sid = await r.new()
        await r.prompt(sid, "an earlier finished prompt " + "padding " * 50)
        await r.prompt(sid, "another one " + "padding " * 50)
        before = len(r.llm.requests)
        r.llm.push({"text": "A summary.", "initial_delay": 0.5})
        async with anyio.create_task_group() as tg:
            tg.start_soon(r.prompt, sid, "/compact")
            with anyio.fail_after(STEP_S):
                while len(r.llm.requests) == before:
                    await anyio.sleep(0.01)
            await r.cancel(sid)
        await r.prompt(sid, "/steer be brief")
        assert r.editor.text(sid).endswith("You said: be brief")


async def _replayed_user_texts(r: Rig, sid: str) -> list[str]:
    """The user messages ``session/load`` replays now."""
    seen = len(r.editor.of_kind(sid, "user_message_chunk"))
    with anyio.fail_after(STEP_S):
        await r.peer.session_load(
            m.LoadSessionRequest(session_id=sid, cwd=str(r.workspace), mcp_servers=[])
        )
    return [u.content.text for u in r.editor.of_kind(sid, "user_message_chunk")[seen:]]


async def test_load_replays_what_compact_summarised_but_not_what_reset_cleared(
    tmp_path: Path,
) -> None:
    async with rig(tmp_path) as r:
        sid = await r.new()
        asked = [f"message number {n} " + "padding " * 50 for n in range(4)]
        for text in asked:
            await r.prompt(sid, text)
        await r.prompt(sid, "/compact")
        await r.prompt(sid, "after compaction")
        replayed = await _replayed_user_texts(r, sid)
        assert [t for t in replayed if t in asked] == asked  # the whole conversation
        assert replayed[-1] == "after compaction"
        await r.prompt(sid, "/reset")
        await r.prompt(sid, "a fresh start")
        assert await _replayed_user_texts(r, sid) == ["a fresh start"]


async def test_a_prompt_during_compact_after_a_cancelled_turn_is_queued_too(
    tmp_path: Path,
) -> None:
    """The cancel of an earlier turn leaves nothing behind: a prompt sent while /compact
    runs is queued (no model call overlaps the compaction) and kept."""
    slow = {"text": "x" * 40, "chunks": 40, "delay": 0.25}
    async with rig(tmp_path) as r:
        sid = await r.new()
        for n in range(3):
            await r.prompt(sid, f"message {n} " + "padding " * 50)
        r.llm.push(slow)
        async with anyio.create_task_group() as tg:
            seen = len(r.editor.of_kind(sid, "agent_message_chunk"))
            tg.start_soon(r.prompt, sid, "talk slowly")
            await r.editor.wait_for(
                lambda: len(r.editor.of_kind(sid, "agent_message_chunk")) > seen
            )
            await r.cancel(sid)
        before = len(r.llm.requests)
        r.llm.push({"text": "A summary.", "initial_delay": 1.0})
        async with anyio.create_task_group() as tg:
            tg.start_soon(r.prompt, sid, "/compact")
            with anyio.fail_after(STEP_S):
                while len(r.llm.requests) == before:  # the summary request is out
                    await anyio.sleep(0.01)
            await r.prompt(sid, "sent during compaction")
            assert len(r.llm.requests) == before + 1  # no turn beside the compaction
            assert r.editor.text(sid).endswith("Queued for the next turn. (1 queued)")
        await r.prompt(sid, "next")
        users = [x["content"] for x in r.llm.requests[-1]["messages"] if x["role"] == "user"]
        assert "sent during compaction" in users


async def test_queue_and_steer_keep_the_prompts_attachments(tmp_path: Path) -> None:
    """/queue with an attached file, and /steer re-running an interrupted prompt that had
    one, send the file's content to the model, not just its placeholder."""
    slow = {"text": "z" * 40, "chunks": 40, "delay": 0.25}
    async with rig(tmp_path) as r:
        (r.workspace / "notes.txt").write_text("the secret ingredient is basil\n")
        link = m.ContentBlockResourceLink(
            name="notes.txt", uri=(r.workspace / "notes.txt").as_uri()
        )
        sid = await r.new()

        async def send(text: str) -> m.PromptResponse:
            with anyio.fail_after(STEP_S):
                return await r.peer.session_prompt(
                    m.PromptRequest(session_id=sid, prompt=[m.ContentBlockText(text=text), link])
                )

        await send("/queue summarise this file")
        assert "basil" in str(r.llm.requests[-1]["messages"][-1]["content"])
        r.llm.push(slow)
        async with anyio.create_task_group() as tg:
            tg.start_soon(send, "read this slowly")
            await r.editor.wait_for(lambda: r.editor.text(sid).endswith("z"))
            await r.cancel(sid)
        await r.prompt(sid, "/steer be brief")
        last = str(r.llm.requests[-1]["messages"][-1]["content"])
        assert "read this slowly" in last and "basil" in last and "be brief" in last
