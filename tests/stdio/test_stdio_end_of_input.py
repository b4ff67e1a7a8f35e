"""End of input always ends the process: a permission request pending does not hold it.

The editor closes the backend's stdin while a turn waits for its answer to a permission
request (the approval timeout is 600 s here). The process must exit 0 on its own within
:data:`EXIT_TIMEOUT`: the request to the client fails (the command is refused and not
run), the turn is cancelled, and its history up to then is in the database.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import anyio
import pytest

from tests.stdio.stdio_support import (
    ACPWIRE,
    EXIT_TIMEOUT,
    STEP_TIMEOUT,
    child_env,
    destructive_command_turn,
    parse_lines,
    raw_child,
    request,
    write_home,
)
from tests.support.fake_llm import FakeLLM

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]


async def test_stdin_closed_during_a_permission_request_ends_the_process(tmp_path: Path) -> None:
    work, script = destructive_command_turn(tmp_path)
    stderr_path = tmp_path / "stderr.log"
    with FakeLLM(script) as llm:
        home = write_home(tmp_path / "home", llm.base_url)
        with (home / "config.toml").open("a", encoding="utf-8") as config:
            config.write("[backend]\napproval_timeout_s = 600\n")
        async with raw_child(
            ACPWIRE, env=child_env(home), stderr_path=stderr_path, answer=lambda _: None
        ) as peer:
            with anyio.fail_after(STEP_TIMEOUT):
                await peer.call("initialize", {"protocolVersion": 1})
                new = await peer.call("session/new", {"cwd": str(work), "mcpServers": []})
                sid = new["result"]["sessionId"]
                prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "clean up"}]}
                await peer.send(
                    {"jsonrpc": "2.0", "id": 50, "method": "session/prompt", "params": prompt}
                )
                await peer.wait_for(lambda m: m.get("method") == "session/request_permission")
            assert peer.process.stdin is not None
            await peer.process.stdin.aclose()
            with anyio.fail_after(EXIT_TIMEOUT):  # far less than the approval timeout
                code = await peer.process.wait()

    assert code == 0
    assert (work / "victim").is_dir() and not (work / "ran").exists()  # nothing was run
    messages = parse_lines(peer.lines)
    assert all(m.get("error", {}).get("code") != -32603 for m in messages)
    with sqlite3.connect(home / "sessions.db") as db:
        rows = [
            json.loads(text) for (text,) in db.execute("SELECT message FROM messages ORDER BY seq")
        ]
    assert rows[0] == {"role": "user", "content": "clean up"}
    # The turn was saved: the model's tool call and its refusal are in the history.
    assert any(r["role"] == "assistant" and r.get("tool_calls") for r in rows)
    assert any(r["role"] == "tool" for r in rows)
    assert "Traceback" not in stderr_path.read_text(encoding="utf-8")


def test_a_client_leaving_right_after_initialize_never_crashes_the_exit(tmp_path: Path) -> None:
    """Background work of start-up (the model look-up's local discovery, the sandbox
    probe spawning bubblewrap) may still run when the input ends at once; the process
    must still exit 0, never by a signal. Before exit waited for those threads, about
    one exit in twenty died of SIGSEGV or SIGABRT here under load (a daemon thread in a
    system call met the interpreter's finalization); a quiet machine rarely shows it, so
    this test catches a regression mainly under load."""
    home = tmp_path / "home"  # nothing configured: local discovery runs in a thread
    home.mkdir()
    env = {**child_env(home), "ACPWIRE_LOG_LEVEL": "DEBUG"}
    init = request(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    codes = []
    for _ in range(25):
        child = subprocess.Popen(
            list(ACPWIRE),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(json.dumps(init).encode() + b"\n")
        child.stdin.flush()
        assert json.loads(child.stdout.readline())["id"] == 0
        child.stdin.write(json.dumps(request(1, "session/list", {})).encode() + b"\n")
        child.stdin.close()  # the client leaves right behind its last request
        assert json.loads(child.stdout.readline())["id"] == 1
        codes.append(child.wait(timeout=60))
        child.stdout.close()
    assert codes == [0] * 25
