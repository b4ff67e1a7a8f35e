"""Golden wire messages: every variant of the protocol's unions validates to its own class
and re-serializes to exactly the JSON it came from.

Each ``golden/<family>.<tag>.json`` is one full message body (``session/update`` params,
``session/prompt`` params, a ``session/request_permission`` result, ...) written from the
schema. The guard test keeps the folder complete as the schema grows.
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

from acp_v1 import DECODE, models as m
from tests.generated.schema_facts import pascal, union_tags

GOLDEN = Path(__file__).resolve().parent / "golden"
Step = str | int


@dataclass(frozen=True)
class Family:
    union: str
    """The union the variant belongs to (a name in ``acp_v1.models``)."""
    carrier: Any
    """The message type the golden file is an instance of."""
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
    assert len(FILES) >= 38


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_golden_round_trip(path: Path) -> None:
    family_name, tag = _split(path)
    family = FAMILIES[family_name]
    text = path.read_text()
    wire = json.loads(text)
    assert _non_camel_keys(wire) == []

    message = TypeAdapter(family.carrier).validate_json(text)
    assert type(message) is family.carrier
    assert message.model_dump(mode="json", by_alias=True, exclude_none=True) == wire

    expected_class = getattr(m, family.union + pascal(tag))
    variant = _follow(message, family.path)
    assert type(variant) is expected_class

    # The union on its own picks the same class and gives back the same JSON.
    raw_variant = _follow(wire, family.path)
    alone = TypeAdapter(getattr(m, family.union)).validate_python(raw_variant, context=DECODE)
    assert type(alone) is expected_class
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
