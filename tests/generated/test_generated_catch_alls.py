"""The catch-alls the schema defines itself (a ``title: other`` member whose tag is a
plain string), as the models apply them: like ``SessionUpdateOther``, their tag is an
``Unknown`` refusing the known tags, so a known tag always means the known variant, an
unknown one is kept with every field, and a catch-all cannot be built with a known tag.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from acp_v1 import DECODE, Unknown, models as m

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
