"""The schema's x-deserialize-* leniency rules and the open unions, as the models apply them.

Leniency salvages malformed *optional* data; it must never turn a malformed message
into a valid one.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from acp_v1 import DECODE, Unknown, models as m

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


# The catch-alls the schema defines itself (a `title: other` member whose tag is a plain
# string) keep unknown variants the same way: their tag is an `Unknown` refusing the
# known tags, so a known tag always means the known variant.
STATE = TypeAdapter(m.StateUpdate)
ELICITATION = TypeAdapter(m.CreateElicitationResponse)

UNKNOWN_STATE = {
    "state": "_vendor.example/paused",
    "resumeAt": "2026-12-02T17:00:00Z",
    "reason": {"kind": "quota", "retries": [1, 2.5, "three", False]},
    "_meta": {"vendor.example/feature": True},
}
UNKNOWN_ACTION = {
    "action": "_vendor.example/defer",
    "until": "tomorrow",
    "content": {"draft": {"name": "Ada"}},
    "_meta": {"vendor.example/feature": True},
}


@pytest.mark.parametrize(
    ("state", "cls"),
    [
        ({"state": "running"}, m.StateUpdateRunning),
        ({"state": "requires_action"}, m.StateUpdateRequiresAction),
        ({"state": "unknown"}, m.StateUpdateUnknown),
        ({"state": "idle", "stopReason": "cancelled"}, m.StateUpdateIdleCancelled),
        ({"state": "idle", "stopReason": "_vendor_pause"}, m.StateUpdateIdleOther),
    ],
)
def test_known_state_tags_decode_to_their_variant(state: dict[str, Any], cls: type) -> None:
    assert type(STATE.validate_json(json.dumps(state))) is cls


@pytest.mark.parametrize(
    ("response", "cls"),
    [
        ({"action": "accept", "content": {"name": "Ada"}}, m.CreateElicitationResponseAccept),
        ({"action": "decline"}, m.CreateElicitationResponseDecline),
        ({"action": "cancel"}, m.CreateElicitationResponseCancel),
    ],
)
def test_known_elicitation_actions_decode_to_their_variant(
    response: dict[str, Any], cls: type
) -> None:
    assert type(ELICITATION.validate_json(json.dumps(response))) is cls


@pytest.mark.parametrize(
    ("adapter", "wire", "other", "tag"),
    [
        (STATE, UNKNOWN_STATE, m.StateUpdateOther, "state"),
        (ELICITATION, UNKNOWN_ACTION, m.CreateElicitationResponseOther, "action"),
    ],
    ids=["state", "elicitation-action"],
)
def test_unknown_tag_is_kept_in_the_schema_catch_all(
    adapter: TypeAdapter[Any], wire: dict[str, Any], other: type[Any], tag: str
) -> None:
    for value in (
        adapter.validate_json(json.dumps(wire)),
        adapter.validate_python(wire, context=DECODE),
    ):
        assert type(value) is other
        assert getattr(value, tag) == Unknown(wire[tag])
        assert adapter.dump_python(value, mode="json", by_alias=True, exclude_none=True) == wire


def test_unknown_idle_stop_reason_is_kept_in_the_embedded_catch_all() -> None:
    wire = {"state": "idle", "stopReason": "_vendor_pause", "detail": {"eta": 5}}
    state = STATE.validate_json(json.dumps(wire))
    assert type(state) is m.StateUpdateIdleOther
    assert state.stop_reason == Unknown("_vendor_pause")
    assert state.model_extra == {"detail": {"eta": 5}}
    assert STATE.dump_python(state, mode="json", by_alias=True, exclude_none=True) == wire


# Before the catch-alls refused known tags, each of these became an "unknown" variant.
@pytest.mark.parametrize(
    ("adapter", "wire"),
    [
        (ELICITATION, {"action": "accept", "content": 5}),
        (TypeAdapter(m.ElicitationPropertySchema), {"type": "number", "minimum": "low"}),
        (TypeAdapter(m.MultiSelectItems), {"type": "string"}),
        (
            TypeAdapter(m.CreateElicitationRequest),
            {"message": "hi", "mode": "url", "sessionId": "s"},
        ),
        (STATE, {"state": "idle", "stopReason": 5}),
    ],
    ids=[
        "accept-bad-content",
        "number-bad-minimum",
        "string-items-no-enum",
        "url-no-url",
        "idle-int",
    ],
)
def test_malformed_known_variant_is_not_kept_as_the_schema_catch_all(
    adapter: TypeAdapter[Any], wire: dict[str, Any]
) -> None:
    with pytest.raises(ValidationError):
        result = adapter.validate_json(json.dumps(wire))
        pytest.fail(f"{wire} became {result!r}")


@pytest.mark.parametrize(
    ("other", "field", "known"),
    [
        (m.StateUpdateOther, "state", "running"),
        (m.StateUpdateOther, "state", "idle"),
        (m.StateUpdateIdleOther, "stop_reason", "end_turn"),
        (m.IdleStateUpdateOther, "stop_reason", "refusal"),
        (m.CreateElicitationResponseOther, "action", "accept"),
        (m.CreateElicitationResponseOther, "action", "cancel"),
        (m.ElicitationPropertySchemaOther, "type", "string"),
        (m.MultiSelectItemsOther, "type", "string"),
        (m.CreateElicitationRequestOtherSession, "mode", "form"),
    ],
)
def test_constructing_a_catch_all_with_a_known_tag_fails(
    other: type[Any], field: str, known: str
) -> None:
    extra = (
        {"session_id": "s", "message": "m"}
        if other is m.CreateElicitationRequestOtherSession
        else {}
    )
    for tag in (known, Unknown(known)):
        with pytest.raises(ValidationError):
            other(**{field: tag}, **extra)
    vendor = other(**{field: Unknown("_vendor.example")}, **extra)
    assert getattr(vendor, field) == Unknown("_vendor.example")
