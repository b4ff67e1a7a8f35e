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
it (``make hermes-venv``, ``make gptme-venv``; ``.ci/run`` builds both). mistral-vibe and
kimi-cli need Python >= 3.12, which this machine has only once ``make agents-python`` has
built it (about 3 minutes): ``make check-agents`` installs them, CI does not, so their tests
skip there. The acpx test needs acpx (``make interop-deps``).
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

from acpwire.cli.tap._mask import MASK
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
VIBE = AGENTS["mistral-vibe"]
KIMI = AGENTS["kimi"]


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
    # The trace holds each line once, in order, as it was on the wire; a masked one as the
    # same message with secret-looking values replaced.
    for direction, wire in (("client->agent", session.sent), ("agent->client", session.received)):
        traced = [r for r in records if r["dir"] == direction]
        assert len(traced) == len(lines(wire))
        for record, line in zip(traced, lines(wire), strict=True):
            if record.get("masked"):
                assert masked_copy(json.loads(record["raw"]), json.loads(line)), record
            else:
                assert record["raw"].encode() == line


def masked_copy(masked: object, original: object) -> bool:
    """``masked`` is ``original`` with some values replaced by the tap's mask."""
    if masked == MASK:
        return True
    if isinstance(masked, dict) and isinstance(original, dict):
        return masked.keys() == original.keys() and all(
            masked_copy(masked[k], original[k]) for k in masked
        )
    if isinstance(masked, list) and isinstance(original, list):
        return len(masked) == len(original) and all(
            masked_copy(a, b) for a, b in zip(masked, original, strict=True)
        )
    return masked == original


def masked_keys(records: Sequence[dict[str, Any]]) -> set[str]:
    """The keys whose values the tap masked in the trace."""
    found: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if item == MASK:
                    found.add(key)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for record in records:
        if record.get("masked"):
            walk(json.loads(record["raw"]))
    return found


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
    assert masked_keys(records) == set()
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
    # session_info_update after the prompt's answer, is session state, which may come at
    # any time, ACP v1 prompt-turn: acp_adapter/server.py sends it when its background
    # titler has named the session, `_notify_title_update` around `maybe_auto_title`.)
    assert violations(records) == []
    assert summary(records)["violations"] == []
    assert "acpwire tap: violation" not in session.stderr


@skip_unless_installed(GPTME)
def test_gptme_acp_behind_the_tap(tmp_path: Path) -> None:
    """gptme-acp 0.35.1 (a third-party agent on the official Python SDK): a prompt whose
    model reply is a shell block, which gptme runs, then a sentence."""
    session, records, recorded = run_behind_tap(GPTME, tmp_path)
    assert_nothing_changed(session, records, recorded)
    assert masked_keys(records) == set()
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


@skip_unless_installed(VIBE)
def test_mistral_vibe_behind_the_tap(tmp_path: Path) -> None:
    """mistral-vibe 3.0.3's ``vibe-acp``: the tap flags one violation, a ``usage_update``
    for the new session written before the ``session/new`` answer that gives the client
    its id. vibe/acp/agent.py ``new_session`` calls ``_send_usage_update(session)`` (which
    spawns the notification as a task, ``session.spawn(send())``) and then awaits
    ``_trust_meta`` before returning the response, so the task writes first; the same file
    delays its first ``available_commands_update`` by 0.1 s
    (``INITIAL_AVAILABLE_COMMANDS_DELAY_SECONDS``) for this very reason. ACP v1
    session-setup § Session ID: the id comes with the answer; a client has no session to
    put the update in (docs/AGENTS.md)."""
    session, records, recorded = run_behind_tap(VIBE, tmp_path)
    assert_nothing_changed(session, records, recorded)
    # vibe's token counts in its usage_update `_meta` have names holding TOKEN, but they
    # are numbers: the tap masks only strings, so the trace keeps them.
    assert masked_keys(records) == set()
    assert client_side(records) == SCRIPTED_CLIENT
    ((direction, rule, message),) = violations(records)
    assert (direction, rule) == ("agent->client", "unknown-session")
    assert message == (
        f'session/update for session "{session.session_id}", which the client was never given'
    )
    (flagged,) = [r for r in records if r.get("violations")]
    answer = next(r for r in records if r["kind"] == "response" and r.get("id") == 2)
    assert records.index(flagged) < records.index(answer)
    assert json.loads(flagged["raw"])["params"]["update"]["sessionUpdate"] == "usage_update"
    assert summary(records)["counts"]["violations"] == {"unknown-session": 1}
    assert session.stderr.count("acpwire tap: violation [unknown-session]") == 1


@skip_unless_installed(KIMI)
def test_kimi_cli_entry_point_behind_the_tap(tmp_path: Path) -> None:
    """kimi-cli 1.52.0's documented ACP command, ``kimi acp``, answers ``initialize`` with
    a line of prose on stdout and exits: its entry point (kimi_cli/__main__.py
    ``_deprecation_gate``) prints ``deprecation_message()`` for any argument. The tap
    flags the line (not-json) and the request never answered (unanswered)."""
    entry = AGENTS["kimi-entry-point"]
    with BenchModelServer(model=MODEL) as server:
        launch = entry.launch(tmp_path / "root", server.base_url)
        assert launch.argv == [KIMI.bin("kimi"), "acp"]
        session = scripted_session(launch, entry.turn, tmp_path / "trace.jsonl")
    assert session.error == "the agent closed its stdout before answering initialize"
    assert session.returncode == 0
    assert session.received.startswith(b"kimi-cli is no longer maintained.")
    records = read_trace(tmp_path / "trace.jsonl")
    assert violations(records) == [
        ("agent->client", "not-json", "the agent wrote a line that is not JSON"),
        ("end", "unanswered", "initialize request 1 sent by the client was never answered"),
    ]


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
