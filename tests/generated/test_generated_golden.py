"""Golden wire messages: every variant of the protocol's unions validates to its own class
and re-serializes to exactly the JSON it came from.

Each ``golden/<family>.<tag>.json`` is one full message body (``session/update`` params,
``session/prompt`` params, a ``session/request_permission`` result, ...) written from the
schema. The guard test keeps the folder complete as the schema grows. The ``other`` file
of a union whose schema defines a catch-all is an unknown variant: it must land in the
catch-all with every field kept.
"""

from __future__ import annotations

import json
import re
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter

from acp_v1 import DECODE, Unknown, models as m
from tests.generated.schema_facts import pascal, union_tags

GOLDEN = Path(__file__).resolve().parent / "golden"
Step = str | int


@dataclass(frozen=True)
class Family:
    union: str
    """The union the variant belongs to (a name in ``acp_v1.models``)."""
    carrier: Any
    """The message type the golden file is an instance of (the union itself for a
    message that is the union, such as the ``elicitation/create`` result)."""
    path: tuple[Step, ...]
    """Wire keys / list indexes from the message to the variant."""


FAMILIES = {
    "session_update": Family("SessionUpdate", m.SessionNotification, ("update",)),
    "content_block": Family("ContentBlock", m.PromptRequest, ("prompt", -1)),
    "tool_call_content": Family("ToolCallContent", m.SessionNotification, ("update", "content", 0)),
    "permission_outcome": Family(
        "RequestPermissionOutcome", m.RequestPermissionResponse, ("outcome",)
    ),
    "config_option": Family(
        "SessionConfigOption", m.SetSessionConfigOptionResponse, ("configOptions", 0)
    ),
    "mcp_server": Family("McpServer", m.NewSessionRequest, ("mcpServers", 0)),
    "plan_update_content": Family("PlanUpdateContent", m.SessionNotification, ("update", "plan")),
    "state_update": Family("StateUpdate", m.SessionNotification, ("update", "state")),
    "elicitation_response": Family("CreateElicitationResponse", m.CreateElicitationResponse, ()),
}

FILES = sorted(GOLDEN.glob("*.json"))
FREE_FORM = {"_meta", "rawInput", "rawOutput"}


def _split(path: Path) -> tuple[str, str]:
    family, _, tag = path.name.removesuffix(".json").partition(".")
    return family, tag


def _field(model: BaseModel, key: str) -> Any:
    for name, info in type(model).model_fields.items():
        if (info.alias or name) == key:
            return getattr(model, name)
    raise AssertionError(f"{type(model).__name__} has no field with wire name {key!r}")


def _follow(value: Any, path: tuple[Step, ...]) -> Any:
    for step in path:
        value = (
            value[step] if isinstance(step, int) or isinstance(value, dict) else _field(value, step)
        )
    return value


def _members(union: Any) -> tuple[type, ...]:
    """The classes of a generated union alias (flattening a nested ``Annotated``)."""
    value = union.__value__
    while typing.get_origin(value) is typing.Annotated:
        value = typing.get_args(value)[0]
    return tuple(
        cls
        for arg in typing.get_args(value)
        for cls in (_members(arg) if hasattr(arg, "__value__") else (arg,))
    )


def _expected_classes(union: str, tag: str) -> tuple[type, ...]:
    """The class of a union's variant; a variant that is a union itself is expanded
    into one class per inner variant (``StateUpdate`` idle -> ``StateUpdateIdleEndTurn``,
    ...), any of which is the variant's."""
    name = union + pascal(tag)
    cls = getattr(m, name, None)
    if cls is not None:
        return (cls,)
    expanded = tuple(c for c in _members(getattr(m, union)) if c.__name__.startswith(name))
    assert expanded, f"{union}: no class for variant {tag!r}"
    return expanded


def _dump(value: Any) -> Any:
    return TypeAdapter(type(value)).dump_python(
        value, mode="json", by_alias=True, exclude_none=True
    )


def _non_camel_keys(value: Any) -> list[str]:
    bad: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if not re.fullmatch(r"_?[a-z][A-Za-z0-9]*", key):
                bad.append(key)
            if key not in FREE_FORM:
                bad += _non_camel_keys(item)
    elif isinstance(value, list):
        for item in value:
            bad += _non_camel_keys(item)
    return bad


def test_golden_folder_is_not_empty() -> None:
    assert len(FILES) >= 47


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_golden_round_trip(path: Path) -> None:
    family_name, tag = _split(path)
    family = FAMILIES[family_name]
    text = path.read_text()
    wire = json.loads(text)
    assert _non_camel_keys(wire) == []

    message = TypeAdapter(family.carrier).validate_json(text)
    if isinstance(family.carrier, type):
        assert type(message) is family.carrier
    assert _dump(message) == wire

    expected = _expected_classes(family.union, tag)
    variant = _follow(message, family.path)
    assert type(variant) in expected

    # The union on its own picks the same class and gives back the same JSON.
    raw_variant = _follow(wire, family.path)
    alone = TypeAdapter(getattr(m, family.union)).validate_python(raw_variant, context=DECODE)
    assert type(alone) is type(variant)
    assert _dump(alone) == raw_variant


@pytest.mark.parametrize("family_name", sorted(FAMILIES))
def test_every_schema_variant_has_a_golden_file(family_name: str) -> None:
    family = FAMILIES[family_name]
    have = {tag for fam, tag in map(_split, FILES) if fam == family_name}
    assert have == set(union_tags(family.union))


def test_every_golden_file_belongs_to_a_family() -> None:
    strays = [p.name for p in FILES if _split(p)[0] not in FAMILIES]
    assert strays == []


def test_session_update_goldens_cover_every_known_variant() -> None:
    known = typing.get_args(typing.get_args(m.KnownSessionUpdate.__value__)[0])
    reached = set()
    for path in FILES:
        family_name, _ = _split(path)
        if family_name == "session_update":
            note = m.SessionNotification.model_validate_json(path.read_text())
            reached.add(type(note.update))
    assert reached == set(known)
    assert m.SessionUpdateOther not in reached


@pytest.mark.parametrize("family_name", ["state_update", "elicitation_response"])
def test_unknown_variant_golden_lands_in_the_catch_all_with_an_unknown_tag(
    family_name: str,
) -> None:
    family = FAMILIES[family_name]
    text = (GOLDEN / f"{family_name}.other.json").read_text()
    variant = _follow(TypeAdapter(family.carrier).validate_json(text), family.path)
    other = getattr(m, family.union + "Other")
    assert type(variant) is other
    raw = _follow(json.loads(text), family.path)
    (tag,) = [key for key in raw if key in {"state", "action"}]
    assert _field(variant, tag) == Unknown(raw[tag])
    declared = {info.alias or name for name, info in other.model_fields.items()}
    assert variant.model_extra == {k: v for k, v in raw.items() if k not in declared}
    assert variant.model_extra
