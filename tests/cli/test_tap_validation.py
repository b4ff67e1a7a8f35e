"""``acpwire tap`` checks what it forwards: over real pipes, behind the real tap.

An agent that breaks one rule on purpose (``tests/fixtures/misbehaving_agent.py
--break RULE``) and a scripted client (two rules are the client's to break: an option
never offered, a method the agent did not advertise); each case must give exactly one
violation, on stderr and in the trace. The same script with nothing broken, and a real
``python -m acpwire`` session against the loopback model server, give none.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.cli.test_tap import PY, read_trace, tap_command
from tests.stdio.stdio_support import (
    ACPWIRE,
    STEP_TIMEOUT,
    JsonObject,
    child_env,
    raw_child,
    refuse,
    request,
    write_home,
)
from tests.support.fake_llm import FakeLLM

pytestmark = pytest.mark.subprocess

AGENT = Path(__file__).resolve().parents[1] / "fixtures" / "misbehaving_agent.py"
STILL_THINKING = "still thinking"  # misbehaving_agent.STILL_THINKING
PROMPT_ID = "prompt-1"


def client(option: str = "allow") -> Any:
    """The scripted client's answers to the agent's requests: the permission with
    ``option``, a file read, a file write; anything else refused."""

    def answer(message: JsonObject) -> JsonObject:
        method, msg_id = message["method"], message["id"]
        if method == "session/request_permission":
            outcome = {"outcome": "selected", "optionId": option}
            return {"jsonrpc": "2.0", "id": msg_id, "result": {"outcome": outcome}}
        if method == "fs/read_text_file":
            return {"jsonrpc": "2.0", "id": msg_id, "result": {"content": "print(1)\n"}}
        if method == "fs/write_text_file":
            return {"jsonrpc": "2.0", "id": msg_id, "result": {}}
        return refuse(message)

    return answer


def _turn_over(message: JsonObject) -> bool:
    if message.get("id") == PROMPT_ID and "method" not in message:
        return True
    update = message.get("params", {}).get("update", {}) if "method" in message else {}
    return bool(update.get("content", {}).get("text") == STILL_THINKING)


async def scripted_session(
    tmp_path: Path, agent: list[str], *, option: str = "allow", load: bool = False
) -> tuple[list[dict[str, Any]], list[str]]:
    """initialize (the client reads files, writes none, has no terminal), session/new,
    one prompt (and a session/load after it); the trace's records and the tap's lines."""
    trace = tmp_path / "trace.jsonl"
    stderr = tmp_path / "stderr.log"
    command = tuple(tap_command("--trace", str(trace), agent=agent))
    env = child_env(tmp_path / "home")
    async with raw_child(command, env=env, stderr_path=stderr, answer=client(option)) as peer:
        with anyio.fail_after(STEP_TIMEOUT):
            caps = {"fs": {"readTextFile": True, "writeTextFile": False}, "terminal": False}
            await peer.call("initialize", {"protocolVersion": 1, "clientCapabilities": caps})
            new = await peer.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})
            session = new["result"]["sessionId"]
            prompt = [{"type": "text", "text": "read a.py"}]
            await peer.send(
                request(PROMPT_ID, "session/prompt", {"sessionId": session, "prompt": prompt})
            )
            await peer.wait_for(_turn_over)
            if load:
                await peer.call(
                    "session/load", {"sessionId": "sess-0", "cwd": str(tmp_path), "mcpServers": []}
                )
        assert await peer.finish() == 0
    ours = [
        line.removeprefix("acpwire tap: ")
        for line in stderr.read_text(encoding="utf-8").splitlines()
        if line.startswith("acpwire tap: ")
    ]
    return read_trace(trace), ours


def violations(records: list[dict[str, Any]]) -> list[dict[str, str]]:
    return [v for record in records for v in record.get("violations", [])]


# (rule, the agent's switch, the client's permission answer, whether it loads a session)
CASES = [
    ("not-json", "not-json", "allow", False),
    ("envelope", "envelope", "allow", False),
    ("direction", "direction", "allow", False),
    ("method-kind", "method-kind", "allow", False),
    ("params", "params", "allow", False),
    ("result", "result", "allow", False),
    ("unknown-id", "unknown-id", "allow", False),
    ("duplicate-answer", "duplicate-answer", "allow", False),
    ("unanswered", "unanswered", "allow", False),
    ("unknown-session", "unknown-session", "allow", False),
    ("update-after-turn", "update-after-turn", "allow", False),
    ("unknown-tool-call", "unknown-tool-call", "allow", False),
    ("capability", "capability", "allow", False),  # the agent writes a file
    ("unoffered-option", None, "allow-always", False),  # the client's answer
    ("capability", None, "allow", True),  # the client loads a session
]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("rule", "broken", "option", "load"),
    CASES,
    ids=[f"{rule}-by-{'agent' if broken else 'client'}" for rule, broken, _, _ in CASES],
)
async def test_each_broken_rule_is_one_line_on_stderr_and_one_violation_in_the_trace(
    tmp_path: Path, rule: str, broken: str | None, option: str, load: bool
) -> None:
    agent = [PY, str(AGENT), *(["--break", broken] if broken else [])]
    records, ours = await scripted_session(tmp_path, agent, option=option, load=load)
    (found,) = violations(records)
    assert found["rule"] == rule and found["message"] and found["spec"]
    said = [line for line in ours if line.startswith("violation ")]
    assert len(said) == 1 and said[0].startswith(f"violation [{rule}] ")
    assert said[0].endswith(f": {found['message']} ({found['spec']})")
    summary = records[-1]
    assert summary["kind"] == "summary" and summary["counts"]["violations"] == {rule: 1}
    assert ours[-1].startswith(f"1 violation in {summary['messages']} messages ({rule} 1)")
    if rule == "unanswered":  # found at the end, on the summary
        assert summary["violations"] == [found]
        assert "session/prompt request" in found["message"]
    else:  # on the record of the line that broke it
        (where,) = [r for r in records if r.get("violations")]
        assert where["kind"] != "summary" and where["dir"] in ("client->agent", "agent->client")


@pytest.mark.anyio
async def test_the_same_session_with_nothing_broken_has_no_violation(tmp_path: Path) -> None:
    records, ours = await scripted_session(tmp_path, [PY, str(AGENT)])
    assert violations(records) == []
    assert [line for line in ours if not line.startswith(f"{PY} ")] == []
    methods = [r["method"] for r in records if r["dir"] == "agent->client" and "method" in r]
    assert {"session/request_permission", "fs/read_text_file", "session/update"} <= set(methods)
    assert records[-1]["counts"] == {"violations": {}, "info": {}}


@pytest.mark.anyio
async def test_acpwire_behind_the_tap_has_no_violation(tmp_path: Path) -> None:
    """The real backend, a prompt with a tool call against the loopback model: every
    message both ways checked, nothing found."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.py").write_text("print(1)\n")
    call = {"id": "call_a", "name": "read_file", "arguments": {"path": "a.py"}}
    script: list[dict[str, Any]] = [{"tool_calls": [call]}, {"text": "It prints 1."}]
    trace = tmp_path / "trace.jsonl"
    stderr = tmp_path / "stderr.log"
    with FakeLLM(script) as llm:
        home = write_home(tmp_path / "home", llm.base_url)
        command = tuple(tap_command("--trace", str(trace), agent=list(ACPWIRE)))
        async with raw_child(command, env=child_env(home), stderr_path=stderr) as peer:
            with anyio.fail_after(STEP_TIMEOUT):
                caps = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
                init = {"protocolVersion": 1, "clientCapabilities": caps}
                await peer.call("initialize", init)
                new = await peer.call("session/new", {"cwd": str(work), "mcpServers": []})
                session = new["result"]["sessionId"]
                text = [{"type": "text", "text": "what does a.py print?"}]
                done = await peer.call("session/prompt", {"sessionId": session, "prompt": text})
                assert done["result"]["stopReason"] == "end_turn"
                await peer.call("session/list", {})
            assert await peer.finish() == 0
    records = read_trace(trace)
    assert violations(records) == [], json.dumps(violations(records), indent=1)
    assert "acpwire tap: violation" not in stderr.read_text(encoding="utf-8")
    updates = [
        json.loads(r["raw"])["params"]["update"]["sessionUpdate"]
        for r in records
        if r.get("method") == "session/update"
    ]
    assert "tool_call" in updates and "agent_message_chunk" in updates
    summary = records[-1]
    assert summary["kind"] == "summary" and summary["counts"]["violations"] == {}
    assert summary["messages"] == len(records) - 1
