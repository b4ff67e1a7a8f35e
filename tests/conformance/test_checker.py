"""The protocol checker in memory: one exchange per rule, each beside the same exchange
done right, which must give no finding at all.

An exchange is a list of (direction, message) pairs fed in order, then ``finish()``.
"""

from __future__ import annotations

from typing import Any

import pytest

from acpwire.conformance import (
    AGENT_TO_CLIENT,
    CLIENT_TO_AGENT,
    RULES,
    Direction,
    Finding,
    ProtocolChecker,
)

C, A = CLIENT_TO_AGENT, AGENT_TO_CLIENT
Exchange = list[tuple[Direction, Any]]

ALL_CLIENT = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
ALL_AGENT = {
    "loadSession": True,
    "promptCapabilities": {"image": True, "audio": True, "embeddedContext": True},
    "mcpCapabilities": {"http": True, "sse": True},
    "sessionCapabilities": {"list": {}, "resume": {}, "close": {}, "additionalDirectories": {}},
}


def req(msg_id: object, method: str, params: object) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


def ok(msg_id: object, result: object) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def note(method: str, params: object) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def update(session: str, **fields: object) -> dict[str, Any]:
    return note("session/update", {"sessionId": session, "update": fields})


def chunk(session: str = "s1", text: str = "hi") -> dict[str, Any]:
    return update(
        session, sessionUpdate="agent_message_chunk", content={"type": "text", "text": text}
    )


def tool_call(tool_id: str = "t1") -> dict[str, Any]:
    return update("s1", sessionUpdate="tool_call", toolCallId=tool_id, title="read a file")


def tool_update(tool_id: str = "t1") -> dict[str, Any]:
    return update("s1", sessionUpdate="tool_call_update", toolCallId=tool_id, status="completed")


def handshake(client: object = ALL_CLIENT, agent: object = ALL_AGENT) -> Exchange:
    return [
        (C, req(0, "initialize", {"protocolVersion": 1, "clientCapabilities": client})),
        (A, ok(0, {"protocolVersion": 1, "agentCapabilities": agent})),
        (C, req(1, "session/new", {"cwd": "/w", "mcpServers": []})),
        (A, ok(1, {"sessionId": "s1"})),
    ]


def prompt(msg_id: int = 2, *blocks: object) -> dict[str, Any]:
    content = list(blocks) or [{"type": "text", "text": "hello"}]
    return req(msg_id, "session/prompt", {"sessionId": "s1", "prompt": content})


def end_turn(msg_id: int = 2) -> dict[str, Any]:
    return ok(msg_id, {"stopReason": "end_turn"})


PERMISSION = req(
    7,
    "session/request_permission",
    {
        "sessionId": "s1",
        "toolCall": {"toolCallId": "t1"},
        "options": [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "deny", "name": "Deny", "kind": "reject_once"},
        ],
    },
)


def chosen(option: str) -> dict[str, Any]:
    return ok(7, {"outcome": {"outcome": "selected", "optionId": option}})


def run(exchange: Exchange) -> list[Finding]:
    checker = ProtocolChecker()
    found = [f for direction, message in exchange for f in checker.check(direction, message)]
    return found + checker.finish()


def rules(found: list[Finding]) -> list[str]:
    return [f.rule for f in found]


# A whole conforming exchange: a turn with a tool call, a permission, a file read and a
# terminal, a state update after the turn, a second turn, a load with its replay.
CONFORMING: Exchange = [
    *handshake(),
    (C, prompt(2)),
    (A, chunk()),
    (A, tool_call("t1")),
    (A, PERMISSION),
    (C, chosen("allow")),
    (A, req(8, "fs/read_text_file", {"sessionId": "s1", "path": "/w/a.py"})),
    (C, ok(8, {"content": "print(1)\n"})),
    (A, req(9, "terminal/create", {"sessionId": "s1", "command": "ls"})),
    (C, ok(9, {"terminalId": "term-1"})),
    (A, tool_update("t1")),
    (A, end_turn(2)),
    (A, update("s1", sessionUpdate="usage_update", used=10, size=100)),
    (A, update("s1", sessionUpdate="session_info_update", title="A title")),
    (C, prompt(3)),
    (A, chunk()),
    (A, ok(3, {"stopReason": "end_turn"})),
    (C, req(4, "session/load", {"sessionId": "s0", "cwd": "/w", "mcpServers": []})),
    (A, update("s0", sessionUpdate="user_message_chunk", content={"type": "text", "text": "q"})),
    (A, chunk("s0")),
    (A, ok(4, {})),
    (C, note("session/cancel", {"sessionId": "s1"})),
    (C, note("$/cancel_request", {"requestId": 99})),
]


def test_a_conforming_exchange_has_no_finding() -> None:
    assert run(CONFORMING) == []


# One case per rule: the exchange that breaks it, and the same exchange done right.
CASES: list[tuple[str, str, Exchange, Exchange]] = [
    (
        "envelope",
        "jsonrpc",
        [
            (C, {**req(0, "initialize", {"protocolVersion": 1}), "jsonrpc": "1.0"}),
            (A, ok(0, {"protocolVersion": 1})),
        ],
        [(C, req(0, "initialize", {"protocolVersion": 1})), (A, ok(0, {"protocolVersion": 1}))],
    ),
    (
        "envelope",
        "request-id",
        [*handshake(), (C, prompt(2.5)), (A, end_turn(2.5))],  # type: ignore[arg-type]
        [*handshake(), (C, prompt(2)), (A, end_turn(2))],
    ),
    (
        "envelope",
        "result-and-error",
        [*handshake(), (C, prompt(2)), (A, {**end_turn(2), "error": {"code": 1, "message": "x"}})],
        [*handshake(), (C, prompt(2)), (A, end_turn(2))],
    ),
    (
        "envelope",
        "error-object",
        [*handshake(), (C, prompt(2)), (A, {"jsonrpc": "2.0", "id": 2, "error": {"code": "bad"}})],
        [
            *handshake(),
            (C, prompt(2)),
            (A, {"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "Internal"}}),
        ],
    ),
    (
        "envelope",
        "id-in-use",
        [*handshake(), (C, prompt(2)), (C, prompt(2)), (A, end_turn(2))],
        [*handshake(), (C, prompt(2)), (A, end_turn(2)), (C, prompt(2)), (A, end_turn(2))],
    ),
    (
        "direction",
        "agent-sends-prompt",
        [*handshake(), (A, prompt(2)), (C, end_turn(2))],
        [*handshake(), (C, prompt(2)), (A, end_turn(2))],
    ),
    (
        "direction",
        "client-sends-update",
        [*handshake(), (C, chunk())],
        [*handshake(), (A, chunk())],
    ),
    (
        "method-kind",
        "update-with-an-id",
        [*handshake(), (A, {**chunk(), "id": 5}), (C, ok(5, None))],
        [*handshake(), (A, chunk())],
    ),
    (
        "params",
        "chunk-without-content",
        [*handshake(), (A, update("s1", sessionUpdate="agent_message_chunk"))],
        [*handshake(), (A, chunk())],
    ),
    (
        "result",
        "new-without-session-id",
        [*handshake()[:3], (A, ok(1, {"session": "s1"}))],
        [*handshake()[:3], (A, ok(1, {"sessionId": "s1"}))],
    ),
    (
        "result",
        "prompt-answered-null",
        [*handshake(), (C, prompt(2)), (A, ok(2, None))],
        [*handshake(), (C, prompt(2)), (A, end_turn(2))],
    ),
    (
        "unknown-id",
        "answer-to-nothing",
        [*handshake(), (C, prompt(2)), (A, end_turn(2)), (A, end_turn(3))],
        [*handshake(), (C, prompt(2)), (A, end_turn(2))],
    ),
    (
        "duplicate-answer",
        "answered-twice",
        [*handshake(), (C, prompt(2)), (A, end_turn(2)), (A, end_turn(2))],
        [*handshake(), (C, prompt(2)), (A, end_turn(2))],
    ),
    (
        "unanswered",
        "prompt-never-answered",
        [*handshake(), (C, prompt(2))],
        [*handshake(), (C, prompt(2)), (A, end_turn(2))],
    ),
    (
        "unknown-session",
        "update-for-another-session",
        [*handshake(), (A, chunk("s2"))],
        [*handshake(), (A, chunk("s1"))],
    ),
    (
        "unknown-session",
        "update-before-the-session-is-given",
        [*handshake()[:3], (A, chunk("s1")), (A, ok(1, {"sessionId": "s1"}))],
        [*handshake()[:3], (A, ok(1, {"sessionId": "s1"})), (A, chunk("s1"))],
    ),
    (
        "update-after-turn",
        "chunk-after-the-answer",
        [*handshake(), (C, prompt(2)), (A, end_turn(2)), (A, chunk())],
        [*handshake(), (C, prompt(2)), (A, chunk()), (A, end_turn(2))],
    ),
    (
        "unknown-tool-call",
        "update-never-announced",
        [
            *handshake(),
            (C, prompt(2)),
            (A, tool_call("t1")),
            (A, tool_update("t2")),
            (A, end_turn()),
        ],
        [
            *handshake(),
            (C, prompt(2)),
            (A, tool_call("t2")),
            (A, tool_update("t2")),
            (A, end_turn()),
        ],
    ),
    (
        "unoffered-option",
        "answer-names-another-option",
        [*handshake(), (C, prompt(2)), (A, PERMISSION), (C, chosen("always")), (A, end_turn())],
        [*handshake(), (C, prompt(2)), (A, PERMISSION), (C, chosen("deny")), (A, end_turn())],
    ),
    (
        "capability",
        "fs-read-not-advertised",
        [
            *handshake(client={"fs": {"writeTextFile": True}}),
            (A, req(8, "fs/read_text_file", {"sessionId": "s1", "path": "/a"})),
            (C, ok(8, {"content": ""})),
        ],
        [
            *handshake(client={"fs": {"readTextFile": True}}),
            (A, req(8, "fs/read_text_file", {"sessionId": "s1", "path": "/a"})),
            (C, ok(8, {"content": ""})),
        ],
    ),
    (
        "capability",
        "terminal-not-advertised",
        [
            *handshake(client={"terminal": False}),
            (A, req(8, "terminal/output", {"sessionId": "s1", "terminalId": "t"})),
            (C, ok(8, {"output": "", "truncated": False})),
        ],
        [
            *handshake(client={"terminal": True}),
            (A, req(8, "terminal/output", {"sessionId": "s1", "terminalId": "t"})),
            (C, ok(8, {"output": "", "truncated": False})),
        ],
    ),
    (
        "capability",
        "load-not-advertised",
        [
            *handshake(agent={"loadSession": False}),
            (C, req(4, "session/load", {"sessionId": "s0", "cwd": "/w", "mcpServers": []})),
            (A, ok(4, {})),
        ],
        [
            *handshake(agent={"loadSession": True}),
            (C, req(4, "session/load", {"sessionId": "s0", "cwd": "/w", "mcpServers": []})),
            (A, ok(4, {})),
        ],
    ),
    (
        "capability",
        "resume-not-advertised",
        [
            *handshake(agent={"sessionCapabilities": {"list": {}}}),
            (C, req(4, "session/resume", {"sessionId": "s0", "cwd": "/w"})),
            (A, ok(4, {})),
        ],
        [
            *handshake(agent={"sessionCapabilities": {"resume": {}}}),
            (C, req(4, "session/resume", {"sessionId": "s0", "cwd": "/w"})),
            (A, ok(4, {})),
        ],
    ),
    (
        "capability",
        "image-not-advertised",
        [
            *handshake(agent={"promptCapabilities": {"audio": True}}),
            (C, prompt(2, {"type": "image", "data": "AA==", "mimeType": "image/png"})),
            (A, end_turn(2)),
        ],
        [
            *handshake(agent={"promptCapabilities": {"image": True}}),
            (C, prompt(2, {"type": "image", "data": "AA==", "mimeType": "image/png"})),
            (A, end_turn(2)),
        ],
    ),
    (
        "capability",
        "http-mcp-not-advertised",
        [
            *handshake(agent={"mcpCapabilities": {"sse": True}}),
            (
                C,
                req(
                    5,
                    "session/new",
                    {
                        "cwd": "/w",
                        "mcpServers": [
                            {"type": "http", "name": "m", "url": "https://m/", "headers": []}
                        ],
                    },
                ),
            ),
            (A, ok(5, {"sessionId": "s5"})),
        ],
        [
            *handshake(agent={"mcpCapabilities": {"http": True}}),
            (
                C,
                req(
                    5,
                    "session/new",
                    {
                        "cwd": "/w",
                        "mcpServers": [
                            {"type": "http", "name": "m", "url": "https://m/", "headers": []}
                        ],
                    },
                ),
            ),
            (A, ok(5, {"sessionId": "s5"})),
        ],
    ),
]


@pytest.mark.parametrize(
    ("rule", "bad", "good"),
    [(rule, bad, good) for rule, _, bad, good in CASES],
    ids=[f"{rule}-{name}" for rule, name, _, _ in CASES],
)
def test_each_rule_fails_the_exchange_that_breaks_it_and_passes_it_done_right(
    rule: str, bad: Exchange, good: Exchange
) -> None:
    found = run(bad)
    assert found and set(rules(found)) == {rule}, found
    for finding in found:
        assert finding.level == "violation"
        assert finding.spec and finding.message
    assert run(good) == []


def test_every_violation_rule_has_a_case_here() -> None:
    tested = {rule for rule, *_ in CASES} | {"not-json"}
    assert tested == {name for name, rule in RULES.items() if rule.level == "violation"}


def test_a_finding_says_what_and_where_in_the_spec() -> None:
    (finding,) = run([*handshake(), (A, chunk("s2"))])
    assert finding.to_json() == {
        "rule": "unknown-session",
        "message": 'session/update for session "s2", which the client was never given',
        "spec": "ACP v1 session-setup § Session ID",
    }
    (params,) = run([*handshake(), (A, update("s1", sessionUpdate="agent_message_chunk"))])
    assert params.message.startswith(
        "session/update params.update.agent_message_chunk.content: Field required"
    )
    assert params.spec == "ACP v1 schema § SessionNotification"
    (unanswered,) = run([*handshake(), (C, prompt(2))])
    assert unanswered.message == "session/prompt request 2 sent by the client was never answered"


def test_a_line_that_is_not_json() -> None:
    checker = ProtocolChecker()
    (finding,) = checker.unparsable(AGENT_TO_CLIENT)
    assert (finding.rule, finding.level) == ("not-json", "violation")
    assert "agent" in finding.message
    assert checker.violations == 1


def test_state_updates_after_the_turn_and_a_loads_replay_are_not_turn_output() -> None:
    """Usage, title, commands, mode and config updates describe the session and may
    come at any time; the replay of a session/load is turn output sent in its time."""
    state = [
        update("s1", sessionUpdate="usage_update", used=1, size=2),
        update("s1", sessionUpdate="available_commands_update", availableCommands=[]),
        update("s1", sessionUpdate="current_mode_update", currentModeId="code"),
    ]
    after = [*handshake(), (C, prompt(2)), (A, end_turn(2)), *((A, m) for m in state)]
    assert run(after) == []
    replay = [
        *handshake(),
        (C, prompt(2)),
        (A, end_turn(2)),
        (C, req(3, "session/load", {"sessionId": "s1", "cwd": "/w", "mcpServers": []})),
        (A, chunk()),
        (A, ok(3, {})),
    ]
    assert run(replay) == []
    assert rules(run([*replay, (A, chunk())])) == ["update-after-turn"]


def test_a_prompt_queued_behind_another_keeps_the_turn_open() -> None:
    """Two prompts open at once: the first one's answer does not end the second's turn."""
    queued = [*handshake(), (C, prompt(2)), (C, prompt(3)), (A, end_turn(2)), (A, chunk())]
    assert run([*queued, (A, end_turn(3))]) == []
    assert rules(run([*queued, (A, end_turn(3)), (A, chunk())])) == ["update-after-turn"]


@pytest.mark.parametrize(
    ("method", "rule"),
    [("_zed.dev/workspace", "extension-method"), ("session/set_model", "unknown-method")],
)
def test_unknown_and_extension_methods_are_information_not_violations(
    method: str, rule: str
) -> None:
    checker = ProtocolChecker()
    for direction, message in handshake():
        assert checker.check(direction, message) == []
    (found,) = checker.check(C, req(5, method, {"sessionId": "s1"}))
    assert (found.rule, found.level) == (rule, "info")
    assert checker.check(A, ok(5, {"anything": True})) == []  # its answer is not checked
    (note_found,) = checker.check(A, note(method, {}))
    assert note_found.level == "info"
    assert checker.finish() == []
    assert checker.violations == 0
    assert checker.counts[rule] == 2


def test_a_refused_request_is_answered_and_checked_no_further() -> None:
    """An error answer ends the request (nothing left unanswered) and its result is not
    validated; a session/load refused still counts as given for its updates."""
    refused = {"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "Internal"}}
    assert run([*handshake(), (C, prompt(2)), (A, refused)]) == []


def test_a_parse_error_answered_with_a_null_id_is_not_an_unknown_id() -> None:
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    assert run([(A, error)]) == []
    assert rules(run([(A, ok(None, {}))])) == ["envelope"]  # a result answers a known id


ODD: list[object] = [
    None,
    0,
    "text",
    [],
    {},
    {"jsonrpc": "2.0"},
    {"jsonrpc": "2.0", "method": None},
    {"jsonrpc": "2.0", "method": "session/update", "params": None},
    {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": 3, "update": []}},
    {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": 5}},
    {"jsonrpc": "2.0", "id": [1], "method": "initialize", "params": []},
    {"jsonrpc": "2.0", "id": {}, "result": []},
    {"jsonrpc": "2.0", "id": 1 << 70, "method": "fs/read_text_file", "params": {}},
    {"jsonrpc": "2.0", "id": True, "error": None},
    {"jsonrpc": "2.0", "id": 7, "result": {"outcome": "selected"}},
    {"jsonrpc": "2.0", "id": 7, "result": {"outcome": {"outcome": "selected"}}},
    {"jsonrpc": "2.0", "method": "session/prompt", "id": 1, "params": {"prompt": 3}},
    {"jsonrpc": "2.0", "method": "session/new", "id": 2, "params": {"mcpServers": [1, None]}},
]


@pytest.mark.parametrize("direction", [C, A])
def test_any_json_value_is_checked_without_raising(direction: Direction) -> None:
    checker = ProtocolChecker()
    for direction_, message in handshake():
        checker.check(direction_, message)
    checker.check(A, PERMISSION)
    for message in ODD:
        for finding in checker.check(direction, message):
            assert finding.rule in RULES and finding.message
    for finding in checker.finish():
        assert finding.rule == "unanswered"
