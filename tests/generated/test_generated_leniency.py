"""The schema's x-deserialize-* leniency rules and the open unions, as the models apply them.

Leniency salvages malformed *optional* data; it must never turn a malformed message
into a valid one.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from acp_v1 import Unknown, models as m

SESSION = "sess_lenient"
UPDATE = TypeAdapter(m.SessionUpdate)


def _note(update: dict[str, Any]) -> m.SessionNotification:
    return m.SessionNotification.model_validate_json(
        json.dumps({"sessionId": SESSION, "update": update})
    )


def _tool_call(**fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "Run tests", **fields}


def test_unknown_tool_kind_is_kept_as_an_unknown() -> None:
    update = _note(_tool_call(kind="teleport")).update
    assert isinstance(update, m.SessionUpdateToolCall)
    assert update.kind == Unknown("teleport")
    assert update.model_dump(by_alias=True, exclude_none=True)["kind"] == "teleport"


def test_known_tool_kind_still_validates() -> None:
    update = _note(_tool_call(kind="execute")).update
    assert isinstance(update, m.SessionUpdateToolCall)
    assert update.kind == "execute"


@pytest.mark.parametrize("bad_status", [5, {"state": "done"}, ["completed"], True])
def test_malformed_status_falls_back_to_none(bad_status: object) -> None:
    update = _note(_tool_call(status=bad_status, kind="read")).update
    assert isinstance(update, m.SessionUpdateToolCall)
    assert update.status is None
    assert update.kind == "read"
    assert update.title == "Run tests"


def test_malformed_tool_call_update_status_falls_back_to_none() -> None:
    update = _note({"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": 5}).update
    assert isinstance(update, m.SessionUpdateToolCallUpdate)
    assert update.status is None


def test_malformed_content_items_are_dropped_and_valid_ones_kept() -> None:
    content = [
        {"type": "content", "content": {"type": "text", "text": "first"}},
        {"type": "diff", "path": "/p/a.py"},  # newText missing
        {"type": "hologram", "terminalId": "t"},  # unknown kind
        7,
        {"type": "terminal", "terminalId": "term_1"},
    ]
    update = _note(_tool_call(content=content)).update
    assert isinstance(update, m.SessionUpdateToolCall)
    assert update.content is not None
    kept = [type(item).__name__ for item in update.content]
    assert kept == ["ToolCallContentContent", "ToolCallContentTerminal"]
    first = update.content[0]
    assert isinstance(first, m.ToolCallContentContent)
    assert isinstance(first.content, m.ContentBlockText)
    assert first.content.text == "first"


def test_malformed_plan_entry_is_dropped() -> None:
    entries = [
        {"content": "keep me", "priority": "high", "status": "pending"},
        {"content": "bad priority", "priority": 3, "status": "pending"},
        {"content": "missing status", "priority": "low"},
    ]
    update = _note({"sessionUpdate": "plan", "entries": entries}).update
    assert isinstance(update, m.SessionUpdatePlan)
    assert [e.content for e in update.entries] == ["keep me"]


@pytest.mark.parametrize("bad_meta", ["oops", 3, ["a"], True])
def test_malformed_meta_falls_back_to_none(bad_meta: object) -> None:
    note = m.SessionNotification.model_validate(
        {
            "sessionId": SESSION,
            "_meta": bad_meta,
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "_meta": bad_meta,
                "content": {"type": "text", "text": "hi", "_meta": bad_meta},
            },
        }
    )
    assert note.meta is None
    update = note.update
    assert isinstance(update, m.SessionUpdateAgentMessageChunk)
    assert update.meta is None
    assert isinstance(update.content, m.ContentBlockText)
    assert update.content.meta is None
    assert update.content.text == "hi"


def test_valid_meta_is_kept() -> None:
    note = m.CancelNotification.model_validate(
        {"sessionId": SESSION, "_meta": {"traceparent": "x"}}
    )
    assert note.meta == {"traceparent": "x"}
    assert note.model_dump(by_alias=True, exclude_none=True) == {
        "sessionId": SESSION,
        "_meta": {"traceparent": "x"},
    }


def test_null_mcp_servers_becomes_an_empty_list() -> None:
    request = m.NewSessionRequest.model_validate_json('{"cwd": "/p", "mcpServers": null}')
    assert request.mcp_servers == []
    assert request.model_dump(by_alias=True, exclude_none=True)["mcpServers"] == []


def test_null_stdio_args_and_env_become_empty_lists() -> None:
    server = TypeAdapter(m.McpServer).validate_python(
        {"name": "fs", "command": "/bin/mcp-fs", "args": None, "env": None}
    )
    assert isinstance(server, m.McpServerStdio)
    assert (server.args, server.env) == ([], [])


def test_mcp_servers_still_required_and_typed() -> None:
    with pytest.raises(ValidationError) as missing:
        m.NewSessionRequest.model_validate({"cwd": "/p"})
    assert missing.value.errors()[0]["loc"] == ("mcpServers",)
    with pytest.raises(ValidationError):
        m.NewSessionRequest.model_validate({"cwd": "/p", "mcpServers": "none"})


UNKNOWN_UPDATE = {
    "sessionUpdate": "rocket_launch",
    "countdown": 10,
    "crew": [{"name": "Ada", "role": "pilot"}],
    "nested": {"deep": {"list": [1, 2.5, "three", False]}},
    "_meta": {"vendor.example/feature": True},
}


def test_unknown_session_update_is_kept_as_other() -> None:
    note = _note(UNKNOWN_UPDATE)
    update = note.update
    assert type(update) is m.SessionUpdateOther
    assert update.session_update == Unknown("rocket_launch")
    assert update.model_extra == {k: v for k, v in UNKNOWN_UPDATE.items() if k != "sessionUpdate"}


def test_unknown_session_update_reserializes_unchanged() -> None:
    note = _note(UNKNOWN_UPDATE)
    dumped = note.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert dumped == {"sessionId": SESSION, "update": UNKNOWN_UPDATE}
    assert (
        json.loads(note.model_dump_json(by_alias=True, exclude_none=True))["update"]
        == UNKNOWN_UPDATE
    )


def test_unknown_update_needs_a_string_tag() -> None:
    for update in ({"countdown": 10}, {"sessionUpdate": 5}):
        with pytest.raises(ValidationError):
            _note(update)


@pytest.mark.parametrize(
    "update",
    [
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}},
        {"sessionUpdate": "current_mode_update", "currentModeId": "code"},
        {"sessionUpdate": "usage_update", "used": 1, "size": 2},
        {"sessionUpdate": "session_info_update"},
    ],
)
def test_valid_known_variant_never_lands_in_other(update: dict[str, Any]) -> None:
    assert type(UPDATE.validate_python(update)) is not m.SessionUpdateOther


# A known tag with a broken body is a malformed message, not an unknown variant: landing
# in SessionUpdateOther would hand a client a "future" update it silently ignores.
@pytest.mark.parametrize(
    "update",
    [
        {"sessionUpdate": "agent_message_chunk"},
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": 5}},
        {"sessionUpdate": "tool_call", "title": "no id"},
        {"sessionUpdate": "usage_update", "used": "many", "size": 2},
    ],
    ids=["chunk-no-content", "chunk-bad-text", "tool-call-no-id", "usage-bad-used"],
)
def test_malformed_known_variant_is_rejected_not_kept_as_other(update: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        result = UPDATE.validate_python(update)
        pytest.fail(f"{update['sessionUpdate']!r} with a broken body became {result!r}")


@pytest.mark.parametrize(
    "note",
    [
        {"update": {"sessionUpdate": "plan", "entries": []}},
        {"sessionId": 42, "update": {"sessionUpdate": "plan", "entries": []}},
        {"sessionId": SESSION},
        {"sessionId": SESSION, "update": "plan"},
    ],
)
def test_invalid_required_fields_still_fail(note: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        m.SessionNotification.model_validate(note)


def test_invalid_required_fields_in_requests_still_fail() -> None:
    with pytest.raises(ValidationError):
        m.PromptRequest.model_validate({"sessionId": SESSION, "prompt": [{"type": "text"}]})
    with pytest.raises(ValidationError):
        m.PromptRequest.model_validate({"sessionId": SESSION, "prompt": [{"type": "video"}]})
    with pytest.raises(ValidationError):
        m.PlanEntry.model_validate({"content": "x", "priority": 3, "status": "pending"})
    with pytest.raises(ValidationError):
        TypeAdapter(m.RequestPermissionOutcome).validate_python({"outcome": "selected"})


def test_json_decoding_does_not_cache_strings() -> None:
    """AcpModel's ``cache_strings=False``: each decoded message gets strings of its own
    (pydantic's default would hand both messages the same cached ``str`` objects)."""
    line = json.dumps(
        {
            "sessionId": SESSION,
            "_meta": {"trace": 1},
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "one repeated text"},
            },
        }
    )
    first, second = (m.SessionNotification.model_validate_json(line) for _ in range(2))
    assert first == second
    assert first.session_id is not second.session_id
    assert first.meta is not None and second.meta is not None
    assert next(iter(first.meta)) is not next(iter(second.meta))
    assert isinstance(first.update, m.SessionUpdateAgentMessageChunk)
    assert isinstance(second.update, m.SessionUpdateAgentMessageChunk)
    assert isinstance(first.update.content, m.ContentBlockText)
    assert isinstance(second.update.content, m.ContentBlockText)
    assert first.update.content.text is not second.update.content.text
