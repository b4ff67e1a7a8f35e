"""acpx 0.19.1 from npm drives ``python -m acpwire`` against the loopback model server:
one-shot prompts, a persistent session, cancel, a permission allowed and denied, a write
through ``fs/write_text_file``, and a client refusing ``terminal/create`` and
``fs/write_text_file`` (the tool call fails; nothing is run or written)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.interop.acpx import RUN_TIMEOUT_S, Acpx, missing
from tests.support.fake_llm import FakeLLM

pytestmark = [
    pytest.mark.subprocess,
    pytest.mark.skipif(missing() is not None, reason=str(missing())),
]

WRITE = {
    "tool_calls": [
        {"id": "w1", "name": "write_file", "arguments": {"path": "out.txt", "content": "hi\n"}}
    ]
}
RUN = {
    "tool_calls": [{"id": "t1", "name": "terminal", "arguments": {"command": "echo ran > ran.txt"}}]
}


def messages(stdout: str) -> list[dict[str, Any]]:
    """The ACP messages acpx prints with ``--format json`` (both directions)."""
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def stop_reason(stdout: str) -> str:
    (reason,) = [
        m["result"]["stopReason"]
        for m in messages(stdout)
        if isinstance(m.get("result"), dict) and "stopReason" in m["result"]
    ]
    return str(reason)


def requests(stdout: str, method: str) -> list[dict[str, Any]]:
    return [m for m in messages(stdout) if m.get("method") == method and "id" in m]


def answers_to(stdout: str, method: str) -> list[dict[str, Any]]:
    """acpx's answers to acpwire's ``method`` requests: the first answer carrying the
    request's id after it (each side numbers its own requests)."""
    found: list[dict[str, Any]] = []
    waiting: set[object] = set()
    for message in messages(stdout):
        if message.get("method") == method and "id" in message:
            waiting.add(message["id"])
        elif "method" not in message and message.get("id") in waiting:
            waiting.discard(message["id"])
            found.append(message)
    return found


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.fixture
def acpx(tmp_path: Path, llm: FakeLLM) -> Acpx:
    return Acpx.make(tmp_path, llm.base_url)


def test_one_shot_prompt(acpx: Acpx, llm: FakeLLM) -> None:
    llm.push({"text": "Hello from the loopback model."})
    done = acpx.run("--format", "quiet", "exec", "say hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello from the loopback model."
    assert "Traceback" not in done.stderr


def test_a_persistent_session_keeps_its_history(acpx: Acpx, llm: FakeLLM) -> None:
    llm.push({"text": "first answer"})
    llm.push({"text": "second answer"})
    try:
        assert acpx.run("sessions", "new").returncode == 0
        first = acpx.run("--format", "quiet", "prompt", "question one")
        assert (first.returncode, first.stdout.strip()) == (0, "first answer"), first.stderr
        second = acpx.run("--format", "quiet", "prompt", "question two")
        assert (second.returncode, second.stdout.strip()) == (0, "second answer"), second.stderr
    finally:
        acpx.run("sessions", "close")
    chat = [m.get("content") for m in llm.requests[-1]["messages"]]
    assert "question one" in chat and "first answer" in chat and "question two" in chat


def test_cancel_ends_the_running_prompt(acpx: Acpx, llm: FakeLLM) -> None:
    llm.push({"text": "tick " * 300, "chunks": 300, "delay": 0.1})  # 30 s unless cancelled
    llm.push({"text": "after the cancel"})
    try:
        assert acpx.run("sessions", "new").returncode == 0
        running = acpx.start("--format", "json", "prompt", "count slowly")
        try:
            assert llm.wait_for_requests(1, timeout=RUN_TIMEOUT_S)
            cancel = acpx.run("cancel")
            assert cancel.returncode == 0, cancel.stderr
            out, err = running.communicate(timeout=RUN_TIMEOUT_S)
        finally:
            if running.poll() is None:
                running.kill()
                running.wait()
        assert stop_reason(out) == "cancelled", err
        # The session goes on serving after the cancel.
        after = acpx.run("--format", "quiet", "prompt", "still there?")
        assert (after.returncode, after.stdout.strip()) == (0, "after the cancel"), after.stderr
    finally:
        acpx.run("sessions", "close")


def test_a_permission_allowed_writes_through_the_editor(acpx: Acpx, llm: FakeLLM) -> None:
    llm.push(WRITE)
    llm.push({"text": "wrote it"})
    done = acpx.run("--approve-all", "--format", "json", "exec", "write the file")
    assert done.returncode == 0, done.stderr
    assert stop_reason(done.stdout) == "end_turn"
    (asked,) = requests(done.stdout, "session/request_permission")
    (diff,) = asked["params"]["toolCall"]["content"]
    assert (diff["type"], diff["oldText"], diff["newText"]) == ("diff", None, "hi\n")
    (written,) = requests(done.stdout, "fs/write_text_file")
    assert written["params"]["path"] == str(acpx.work / "out.txt")
    assert (acpx.work / "out.txt").read_text(encoding="utf-8") == "hi\n"  # acpx wrote it
    # The new file was read through the editor once (acpx prints each miss).
    assert len(requests(done.stdout, "fs/read_text_file")) == 1


def test_a_permission_denied_writes_nothing(acpx: Acpx, llm: FakeLLM) -> None:
    llm.push(WRITE)
    llm.push({"text": "could not"})
    done = acpx.run("--deny-all", "--format", "json", "exec", "write the file")
    assert len(requests(done.stdout, "session/request_permission")) == 1
    assert requests(done.stdout, "fs/write_text_file") == []
    assert not (acpx.work / "out.txt").exists()
    assert "denied" in done.stdout


def test_a_refused_terminal_runs_nothing(acpx: Acpx, llm: FakeLLM) -> None:
    llm.push(RUN)
    llm.push({"text": "could not"})
    done = acpx.run("--deny-all", "--format", "json", "exec", "run it")
    (created,) = requests(done.stdout, "terminal/create")
    (refusal,) = answers_to(done.stdout, "terminal/create")
    assert "error" in refusal, refusal
    assert "refused" in done.stdout and created["params"]
    assert not (acpx.work / "ran.txt").exists()  # not run locally either


def test_a_refused_write_writes_nothing(acpx: Acpx, llm: FakeLLM) -> None:
    """Don't Ask mode asks no permission for the edit, so the editor's refusal of
    ``fs/write_text_file`` itself is what stops it."""
    llm.push(WRITE)
    llm.push({"text": "could not"})
    try:
        assert acpx.run("sessions", "new").returncode == 0
        assert acpx.run("set-mode", "dont_ask").returncode == 0
        done = acpx.run("--deny-all", "--format", "json", "prompt", "write the file")
    finally:
        acpx.run("sessions", "close")
    assert requests(done.stdout, "session/request_permission") == []
    (refusal,) = answers_to(done.stdout, "fs/write_text_file")
    assert "error" in refusal, refusal
    assert "The editor refused to write" in done.stdout
    assert not (acpx.work / "out.txt").exists()
