"""``acpwire tap`` in front of real agents from PyPI, and behind a real client from npm.

Each agent runs from a venv of its own (``bench/agents/real.py`` knows how to install and
launch it offline against the loopback model server: ``bench/model_server.py``), behind
the real tap, through an editor's first session: ``initialize``, ``session/new``, one
prompt. Between the tap and the agent sits ``tests/fixtures/byte_recorder.py``, which
records the bytes the agent really read and wrote: each side must have received exactly
what the other sent. Then the trace (every message once, in order, with its direction
and method) and what the tap flagged, which is asserted exactly: docs/AGENTS.md confirms
each flag in the agent's code.

A test whose agent is not installed skips, saying which venv is missing and how to build
it (``make hermes-venv``, ``make gptme-venv``; ``.ci/run`` builds both). The acpx test
needs acpx (``make interop-deps``).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from bench.agents.real import (
    AGENTS,
    MODEL,
    Agent,
    Session,
    read_trace,
    scripted_session,
    violations,
)
from bench.model_server import BenchModelServer
from tests.interop.acpx import RUN_TIMEOUT_S, Acpx, missing as acpx_missing
from tests.support.fake_llm import FakeLLM

pytestmark = pytest.mark.subprocess

RECORDER = Path(__file__).resolve().parents[1] / "fixtures" / "byte_recorder.py"
HERMES = AGENTS["hermes"]
GPTME = AGENTS["gptme"]


def skip_unless_installed(agent: Agent) -> pytest.MarkDecorator:
    why = agent.missing()
    return pytest.mark.skipif(why is not None, reason=str(why))


def lines(data: bytes) -> list[bytes]:
    """The non-blank lines of a byte stream, without their newline."""
    return [line for line in data.split(b"\n") if line.strip()]


def run_behind_tap(agent: Agent, tmp_path: Path) -> tuple[Session, list[dict[str, Any]], Path]:
    """The agent's scripted session behind the tap, with the byte recorder in between;
    (the session, the trace's records, the recorder's folder)."""
    recorded = tmp_path / "recorded"
    recorded.mkdir()
    wrap = [sys.executable, str(RECORDER), str(recorded / "in"), str(recorded / "out"), "--"]
    trace = tmp_path / "trace.jsonl"
    turn = agent.turn
    with BenchModelServer(turn.script, rules=turn.rules, model=MODEL) as server:
        launch = agent.launch(tmp_path / "root", server.base_url)
        session = scripted_session(launch, turn, trace, wrap=wrap)
    assert session.error == "", f"{session.error}\n{session.stderr[-3000:]}"
    assert session.returncode == 0, session.stderr[-3000:]
    assert session.stop_reason == "end_turn"
    return session, read_trace(trace), recorded


def assert_nothing_changed(
    session: Session, records: Sequence[dict[str, Any]], recorded: Path
) -> None:
    # What the agent read is, byte for byte, what the client wrote, and the other way round.
    assert (recorded / "in").read_bytes() == session.sent
    assert (recorded / "out").read_bytes() == session.received
    # The trace holds each line once, in order, as it was on the wire (nothing is masked
    # in these sessions).
    assert not any(r.get("masked") for r in records)
    to_agent = [r["raw"].encode() for r in records if r["dir"] == "client->agent"]
    to_client = [r["raw"].encode() for r in records if r["dir"] == "agent->client"]
    assert to_agent == lines(session.sent)
    assert to_client == lines(session.received)


def client_side(records: Sequence[dict[str, Any]]) -> list[tuple[str, str | None, object]]:
    return [
        (r["kind"], r.get("method"), r.get("id")) for r in records if r["dir"] == "client->agent"
    ]


def agent_answers(records: Sequence[dict[str, Any]]) -> dict[object, str | None]:
    return {
        r["id"]: r.get("method")
        for r in records
        if r["dir"] == "agent->client" and r["kind"] == "response"
    }


def updates(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        json.loads(r["raw"])["params"]
        for r in records
        if r["dir"] == "agent->client" and r.get("method") == "session/update"
    ]


def summary(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    (last,) = [r for r in records if r["kind"] == "summary"]
    assert last is records[-1]
    return last


SCRIPTED_CLIENT = [
    ("request", "initialize", 1),
    ("request", "session/new", 2),
    ("request", "session/prompt", 3),
]


@skip_unless_installed(HERMES)
def test_hermes_acp_behind_the_tap(tmp_path: Path) -> None:
    """hermes-agent 0.19.0's ``hermes-acp``: a prompt whose model reply reads a file with
    a tool, then answers. Nothing changes on the wire and the tap flags nothing."""
    session, records, recorded = run_behind_tap(HERMES, tmp_path)
    assert_nothing_changed(session, records, recorded)
    assert client_side(records) == SCRIPTED_CLIENT  # hermes asks the client nothing
    assert agent_answers(records) == {1: "initialize", 2: "session/new", 3: "session/prompt"}
    seen = updates(records)
    assert {u["sessionId"] for u in seen} == {session.session_id}
    kinds = [u["update"]["sessionUpdate"] for u in seen]
    assert "available_commands_update" in kinds
    (call,) = [u["update"] for u in seen if u["update"]["sessionUpdate"] == "tool_call"]
    assert call["kind"] == "read" and call["locations"] == [{"path": "notes.txt"}]
    text = "".join(
        u["update"]["content"]["text"]
        for u in seen
        if u["update"]["sessionUpdate"] == "agent_message_chunk"
    )
    assert text.strip() == "The notes say hello."
    # Conforming: no violation on any line nor at the end. (Hermes' last update, its
    # session_info_update after the prompt's answer, is state, which may come at any time:
    # ACP v1 prompt-turn; acp_adapter/server.py sends it once the turn is saved.)
    assert violations(records) == []
    assert summary(records)["violations"] == []
    assert "acpwire tap: violation" not in session.stderr


@skip_unless_installed(GPTME)
def test_gptme_acp_behind_the_tap(tmp_path: Path) -> None:
    """gptme-acp 0.35.1 (a third-party agent on the official Python SDK): a prompt whose
    model reply is a shell block, which gptme runs, then a sentence."""
    session, records, recorded = run_behind_tap(GPTME, tmp_path)
    assert_nothing_changed(session, records, recorded)
    # gptme runs the command without asking the client: the ACP agent's permission code
    # (gptme/acp/agent.py `_create_confirm_with_tools`) is never installed, and gptme
    # initialized non-interactive registers no confirmation hook (gptme/hooks/confirm.py:
    # "Autonomous: No hook registered"). Not a protocol rule, so the tap says nothing;
    # docs/AGENTS.md records it.
    assert client_side(records) == SCRIPTED_CLIENT
    assert (session_work(tmp_path) / "made.txt").read_text() == "made\n"
    assert agent_answers(records) == {1: "initialize", 2: "session/new", 3: "session/prompt"}
    (init,) = [
        json.loads(r["raw"]) for r in records if r.get("id") == 1 and r["kind"] == "response"
    ]
    assert init["result"]["agentInfo"]["name"] == "gptme"
    assert "agentCapabilities" not in init["result"]  # omitted: the baseline, not a fault
    seen = updates(records)
    assert {u["sessionId"] for u in seen} == {session.session_id}
    text = "".join(
        u["update"]["content"]["text"]
        for u in seen
        if u["update"]["sessionUpdate"] == "agent_message_chunk"
    )
    assert "Done: made.txt is written." in text
    assert violations(records) == []
    assert summary(records)["violations"] == []
    assert "acpwire tap: violation" not in session.stderr


def finished_trace(trace: Path, timeout_s: float = 15.0) -> list[dict[str, Any]]:
    """The trace once the tap wrote its summary: acpx exits without waiting for its agent
    (it ends it with SIGTERM, which the tap forwards, then sums up)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            records = read_trace(trace) if trace.exists() else []
        except ValueError:  # a line being written
            records = []
        if records and records[-1]["kind"] == "summary":
            return records
        time.sleep(0.05)
    raise AssertionError(f"the tap wrote no summary in {timeout_s} s: {trace}")


def session_work(tmp_path: Path) -> Path:
    return tmp_path / "root" / "work"


# acpx, the real client, launching the tap as its agent.


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.mark.skipif(acpx_missing() is not None, reason=str(acpx_missing()))
def test_acpx_drives_an_agent_through_the_tap(tmp_path: Path, llm: FakeLLM) -> None:
    """acpx 0.19.1 runs ``acpwire tap -- <recorder> -- python -m acpwire`` as its agent:
    its one-shot prompt works as without the tap, the agent received exactly the lines
    acpx printed as sent, and the trace holds the whole conversation with no violation."""
    llm.push({"text": "Hello through the tap."})
    acpx = Acpx.make(tmp_path, llm.base_url)
    trace = tmp_path / "trace.jsonl"
    recorded = tmp_path / "recorded"
    recorded.mkdir()
    agent = [
        sys.executable,
        "-m",
        "acpwire",
        "tap",
        "--trace",
        str(trace),
        "--",
        sys.executable,
        str(RECORDER),
        str(recorded / "in"),
        str(recorded / "out"),
        "--",
        sys.executable,
        "-m",
        "acpwire",
    ]
    argv = acpx.argv("--format", "json", "exec", "say hello")
    argv[argv.index("--agent") + 1] = shlex.join(agent)
    done = subprocess.run(
        argv,
        env=acpx.env,
        cwd=acpx.work,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    printed = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    records = finished_trace(trace)
    received = [json.loads(line) for line in lines((recorded / "in").read_bytes())]
    sent = [json.loads(line) for line in lines((recorded / "out").read_bytes())]
    # Byte for byte through the tap: the trace's lines are the recorder's.
    assert [r["raw"].encode() for r in records if r["dir"] == "client->agent"] == lines(
        (recorded / "in").read_bytes()
    )
    assert [r["raw"].encode() for r in records if r["dir"] == "agent->client"] == lines(
        (recorded / "out").read_bytes()
    )
    # acpx printed every message of the conversation, both ways: the same as the agent
    # read and wrote.
    assert sorted(map(json.dumps, printed)) == sorted(map(json.dumps, received + sent))
    methods = [r.get("method") for r in records if r["dir"] == "client->agent"]
    assert methods[:2] == ["initialize", "session/new"]
    assert "session/prompt" in methods
    (prompt,) = [
        r for r in records if r.get("method") == "session/prompt" and r["kind"] == "response"
    ]
    assert json.loads(prompt["raw"])["result"]["stopReason"] == "end_turn"
    chunks = [
        u["update"]["content"]["text"]
        for u in updates(records)
        if u["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    assert "".join(chunks) == "Hello through the tap."
    assert violations(records) == []
    assert summary(records)["violations"] == []
    assert "acpwire tap: violation" not in done.stderr
