"""The one-pass inbound decoders: typed envelopes for valid messages, ValidationError
(so the runtime takes its general path) for everything else."""

from __future__ import annotations

import json
import typing
from typing import Any

import pytest
from pydantic import ValidationError

from acp_v1 import dispatch, models as m
from acp_v1.methods import METHODS

UPDATE_LINE = json.dumps(
    {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "sess_1",
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": "call_9",
                "title": "Run pytest",
                "kind": "execute",
                "status": "in_progress",
            },
        },
    }
).encode()

PROMPT_LINE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 17,
        "method": "session/prompt",
        "params": {
            "sessionId": "sess_1",
            "prompt": [
                {"type": "text", "text": "Explain this file"},
                {"type": "resource_link", "name": "a.py", "uri": "file:///p/a.py"},
            ],
        },
    }
).encode()


def test_client_decodes_session_update_to_typed_envelope() -> None:
    envelope = dispatch.inbound_adapter("client").validate_json(UPDATE_LINE)
    assert isinstance(envelope, dispatch.SessionUpdateNotificationEnvelope)
    assert envelope.id is dispatch.NO_ID
    assert isinstance(envelope.params, m.SessionNotification)
    assert envelope.params.session_id == "sess_1"
    update = envelope.params.update
    assert isinstance(update, m.SessionUpdateToolCall)
    assert (update.tool_call_id, update.kind, update.status) == ("call_9", "execute", "in_progress")


def test_agent_decodes_session_prompt_request() -> None:
    envelope = dispatch.inbound_adapter("agent").validate_json(PROMPT_LINE)
    assert isinstance(envelope, dispatch.SessionPromptRequestEnvelope)
    assert envelope.id == 17
    assert isinstance(envelope.params, m.PromptRequest)
    first, second = envelope.params.prompt
    assert isinstance(first, m.ContentBlockText)
    assert first.text == "Explain this file"
    assert isinstance(second, m.ContentBlockResourceLink)
    assert second.uri == "file:///p/a.py"


@pytest.mark.parametrize("request_id", ["req-abc", None])
def test_request_ids_may_be_strings_or_null(request_id: str | None) -> None:
    raw = json.loads(PROMPT_LINE)
    raw["id"] = request_id
    envelope = dispatch.inbound_adapter("agent").validate_python(raw)
    assert envelope.id == request_id


def test_cancel_request_decodes_on_both_sides() -> None:
    line = b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":17}}'
    for role in ("agent", "client"):
        envelope = dispatch.inbound_adapter(role).validate_json(line)
        assert isinstance(envelope, dispatch.CancelRequestNotificationEnvelope)
        assert envelope.params.request_id == 17


def _params(line: bytes) -> Any:
    return json.loads(line)["params"]


@pytest.mark.parametrize(
    ("role", "message"),
    [
        ("agent", {"jsonrpc": "2.0", "id": 3, "method": "_zed.dev/workspace", "params": {}}),
        ("agent", {"jsonrpc": "2.0", "id": 3, "method": "session/teleport", "params": {}}),
        ("client", {"jsonrpc": "2.0", "method": "session/teleport", "params": {}}),
        ("agent", {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}),
        ("client", {"jsonrpc": "2.0", "id": 3, "result": {"sessionId": "s"}}),
        ("client", {"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "nope"}}),
        # Right method, wrong side: the agent never receives session/update.
        ("agent", {"jsonrpc": "2.0", "method": "session/update", "params": _params(UPDATE_LINE)}),
        # Right method, invalid envelope or params.
        (
            "agent",
            {"jsonrpc": "1.0", "id": 3, "method": "session/prompt", "params": _params(PROMPT_LINE)},
        ),
        ("agent", {"jsonrpc": "2.0", "method": "session/prompt", "params": _params(PROMPT_LINE)}),
        (
            "agent",
            {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": "s"}},
        ),
        ("agent", {"jsonrpc": "2.0", "id": 3, "method": "session/prompt"}),
    ],
)
def test_everything_else_raises_validation_error(
    role: typing.Literal["agent", "client"], message: dict[str, Any]
) -> None:
    with pytest.raises(ValidationError):
        dispatch.inbound_adapter(role).validate_json(json.dumps(message))


def test_non_object_lines_raise_validation_error() -> None:
    for line in (b"[]", b"42", b"not json", b""):
        with pytest.raises(ValidationError):
            dispatch.inbound_adapter("client").validate_json(line)


@pytest.mark.parametrize("role", ["agent", "client"])
def test_inbound_union_covers_exactly_the_methods_a_side_receives(
    role: typing.Literal["agent", "client"],
) -> None:
    alias = dispatch.AgentInbound if role == "agent" else dispatch.ClientInbound
    envelopes = typing.get_args(typing.get_args(alias)[0])
    seen = {}
    for envelope in envelopes:
        fields = envelope.model_fields
        (method,) = typing.get_args(fields["method"].annotation)
        kind = "notification" if fields["id"].default is dispatch.NO_ID else "request"
        seen[(method, kind)] = fields["params"].annotation
    expected = {(s.method, s.kind): s.params for s in METHODS if s.side in (role, "protocol")}
    assert seen == expected
