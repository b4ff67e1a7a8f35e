"""Real signals to a real ``python -m acpwire``: Ctrl-C cancels a turn and the backend keeps
serving; Ctrl-C when idle, a second Ctrl-C, or SIGTERM exit 0 with the store intact.

A client that runs the backend in its own process group (acpx) passes the user's Ctrl-C
on to it as SIGINT. The turn in flight streams a slow reply from the loopback model.
"""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path

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
    request,
    write_home,
)
from tests.support.fake_llm import FakeLLM

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

SLOW = {"text": "tick " * 200, "chunks": 200, "delay": 0.1}  # 20 s unless cancelled
QUICK = {"text": "Still here."}
INIT = {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


def _prompt(msg_id: int, sid: str, text: str) -> JsonObject:
    return request(
        msg_id, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
    )


async def _open(peer: RawPeer, work: Path) -> str:
    with anyio.fail_after(STEP_TIMEOUT):
        await peer.call("initialize", INIT)
        new = await peer.call("session/new", {"cwd": str(work), "mcpServers": []})
    return str(new["result"]["sessionId"])


async def _turn_in_flight(peer: RawPeer, sid: str, msg_id: int) -> None:
    """Send a prompt and return once its reply has begun streaming."""
    await peer.send(_prompt(msg_id, sid, "count slowly"))
    with anyio.fail_after(STEP_TIMEOUT):
        await peer.wait_for(
            lambda m: (
                m.get("method") == "session/update"
                and m["params"]["update"].get("sessionUpdate") == "agent_message_chunk"
            )
        )


async def _answer(peer: RawPeer, msg_id: int) -> JsonObject:
    with anyio.fail_after(STEP_TIMEOUT):
        return await peer.wait_for(lambda m: m.get("id") == msg_id and "method" not in m)


async def _exit_code(peer: RawPeer) -> int:
    with anyio.fail_after(EXIT_TIMEOUT):
        return await peer.process.wait()


def _stored(home: Path, sid: str) -> list[str]:
    """The session's stored messages, read from the SQLite file after the process ended."""
    with sqlite3.connect(home / "sessions.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("SELECT count(*) FROM sessions WHERE id = ?", (sid,)).fetchone() == (1,)
        rows = db.execute("SELECT message FROM messages WHERE session_id = ? ORDER BY seq", (sid,))
        return [row[0] for row in rows]


def _no_traceback(stderr: Path) -> None:
    text = stderr.read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in text, text[-3000:]


@pytest.mark.parametrize("ending", ["idle-sigint", "second-sigint", "sigterm"])
async def test_sigint_cancels_the_turn_and_the_backend_serves_on(
    tmp_path: Path, ending: str
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    stderr = tmp_path / "stderr.log"
    with FakeLLM([SLOW, QUICK, SLOW]) as llm:
        home = write_home(tmp_path / "home", llm.base_url)
        async with raw_child(ACPWIRE, env=child_env(home), stderr_path=stderr) as peer:
            sid = await _open(peer, work)
            await _turn_in_flight(peer, sid, 10)
            peer.process.send_signal(signal.SIGINT)
            assert (await _answer(peer, 10))["result"]["stopReason"] == "cancelled"
            assert peer.process.returncode is None  # it survived the first Ctrl-C
            await peer.send(_prompt(11, sid, "are you there?"))
            assert (await _answer(peer, 11))["result"]["stopReason"] == "end_turn"
            if ending == "idle-sigint":
                peer.process.send_signal(signal.SIGINT)
            elif ending == "second-sigint":
                await _turn_in_flight(peer, sid, 12)
                peer.process.send_signal(signal.SIGINT)
                peer.process.send_signal(signal.SIGINT)
            else:
                await _turn_in_flight(peer, sid, 12)
                peer.process.send_signal(signal.SIGTERM)
            assert await _exit_code(peer) == 0
    stored = "\n".join(_stored(home, sid))
    assert "are you there?" in stored and "Still here." in stored
    _no_traceback(stderr)


async def test_sigint_before_any_session_exits_cleanly(tmp_path: Path) -> None:
    stderr = tmp_path / "stderr.log"
    with FakeLLM() as llm:
        home = write_home(tmp_path / "home", llm.base_url)
        async with raw_child(ACPWIRE, env=child_env(home), stderr_path=stderr) as peer:
            with anyio.fail_after(STEP_TIMEOUT):
                await peer.call("initialize", INIT)
            peer.process.send_signal(signal.SIGINT)
            assert await _exit_code(peer) == 0
    _no_traceback(stderr)
