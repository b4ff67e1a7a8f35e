"""What the client was told is kept survives ``kill -9``: queued prompts, forks of compacted sessions.

Each test runs a real ``acpwire`` on a config home, kills it with SIGKILL (no shutdown
of any kind), then starts a second one on the same home and loads the sessions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.stdio.stdio_support import (
    ACPWIRE,
    EXIT_TIMEOUT,
    STEP_TIMEOUT,
    JsonObject,
    RawPeer,
    child_env,
    raw_child,
    write_home,
)
from tests.support.fake_llm import FakeLLM

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]


async def _kill(peer: RawPeer) -> None:
    peer.process.kill()
    with anyio.fail_after(EXIT_TIMEOUT):
        assert await peer.process.wait() != 0


def _replayed(peer: RawPeer, sid: str, since: int) -> list[tuple[str, str]]:
    """(kind, text) of the message chunks sent for ``sid`` from message ``since`` on."""
    chunks: list[tuple[str, str]] = []
    for message in peer.messages[since:]:
        if message.get("method") != "session/update" or message["params"]["sessionId"] != sid:
            continue
        update = message["params"]["update"]
        if update["sessionUpdate"] in ("user_message_chunk", "agent_message_chunk"):
            chunks.append((update["sessionUpdate"], update["content"]["text"]))
    return chunks


async def _load(peer: RawPeer, sid: str, cwd: Path) -> list[tuple[str, str]]:
    since = len(peer.messages)
    answer = await peer.call("session/load", {"sessionId": sid, "cwd": str(cwd), "mcpServers": []})
    assert "result" in answer, answer
    return _replayed(peer, sid, since)


def _prompt(sid: str, text: str) -> JsonObject:
    return {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}


def _user_texts(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "user"]


async def test_a_queued_prompt_outlives_a_kill_and_is_shown_as_not_run(tmp_path: Path) -> None:
    work = (tmp_path / "work").resolve()
    work.mkdir()
    first, queued = "first: tidy up", "second: write the changelog"
    script: list[dict[str, Any]] = [
        {
            "tool_calls": [
                {"id": "call-1", "name": "terminal", "arguments": {"command": f"rm -rf {work}/x"}}
            ]
        },
    ]
    with FakeLLM(script) as llm:
        home = write_home(tmp_path / "home", llm.base_url)
        async with raw_child(
            ACPWIRE,
            env=child_env(home),
            stderr_path=tmp_path / "stderr-1.log",
            answer=lambda _: None,
        ) as peer:
            with anyio.fail_after(STEP_TIMEOUT):
                await peer.call("initialize", {"protocolVersion": 1})
                new = await peer.call("session/new", {"cwd": str(work), "mcpServers": []})
                sid = new["result"]["sessionId"]
                await peer.send(
                    {
                        "jsonrpc": "2.0",
                        "id": 50,
                        "method": "session/prompt",
                        "params": _prompt(sid, first),
                    }
                )
                # The first turn waits for a permission nobody gives: the second prompt queues.
                await peer.wait_for(lambda m: m.get("method") == "session/request_permission")
                answer = await peer.call("session/prompt", _prompt(sid, queued))
            assert answer["result"]["stopReason"] == "end_turn"  # acknowledged
            assert any("Queued for the next turn" in text for _, text in _replayed(peer, sid, 0))
            await _kill(peer)

        async with raw_child(
            ACPWIRE, env=child_env(home), stderr_path=tmp_path / "stderr-2.log"
        ) as peer:
            with anyio.fail_after(STEP_TIMEOUT):
                await peer.call("initialize", {"protocolVersion": 1})
                replay = await _load(peer, sid, work)
                again = await peer.call("session/prompt", _prompt(sid, "third"))
                replay_again = await _load(peer, sid, work)
            assert again["result"]["stopReason"] == "end_turn"
            assert await peer.finish() == 0

    users = [text for kind, text in replay if kind == "user_message_chunk"]
    assert users == [first, queued]
    notes = [text for kind, text in replay if kind == "agent_message_chunk"]
    assert len(notes) == 1 and "not run" in notes[0]
    # Recorded once, not again on the next load; the model never saw it as asked.
    assert [t for k, t in replay_again if k == "user_message_chunk"] == [first, queued, "third"]
    assert queued not in _user_texts(llm.requests[-1])
    assert _user_texts(llm.requests[-1])[-1] == "third"


async def test_a_fork_of_a_compacted_session_replays_what_its_parent_replays(
    tmp_path: Path,
) -> None:
    work = (tmp_path / "work").resolve()
    work.mkdir()
    asked = [f"question {n}: " + "padding " * 60 for n in range(4)]
    with FakeLLM([]) as llm:  # echoes, summaries included
        home = write_home(tmp_path / "home", llm.base_url)
        async with raw_child(
            ACPWIRE, env=child_env(home), stderr_path=tmp_path / "stderr-1.log"
        ) as peer:
            with anyio.fail_after(STEP_TIMEOUT * 2):
                await peer.call("initialize", {"protocolVersion": 1})
                new = await peer.call("session/new", {"cwd": str(work), "mcpServers": []})
                parent = new["result"]["sessionId"]
                for text in asked:
                    await peer.call("session/prompt", _prompt(parent, text))
                compact = await peer.call("session/prompt", _prompt(parent, "/compact"))
                assert compact["result"]["stopReason"] == "end_turn"
                fork = await peer.call(
                    "session/fork", {"sessionId": parent, "cwd": str(work), "mcpServers": []}
                )
                child = fork["result"]["sessionId"]
            await _kill(peer)

        async with raw_child(
            ACPWIRE, env=child_env(home), stderr_path=tmp_path / "stderr-2.log"
        ) as peer:
            with anyio.fail_after(STEP_TIMEOUT * 2):
                await peer.call("initialize", {"protocolVersion": 1})
                parent_replay = await _load(peer, parent, work)
                child_replay = await _load(peer, child, work)
                await peer.call("session/prompt", _prompt(child, "next"))
            assert await peer.finish() == 0

    assert [t for k, t in parent_replay if k == "user_message_chunk"] == asked
    assert child_replay == parent_replay
    # The fork's model still gets the compacted live history, not the archived turns.
    sent = _user_texts(llm.requests[-1])
    assert sent[-1] == "next" and asked[0] not in sent
