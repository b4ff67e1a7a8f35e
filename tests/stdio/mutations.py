"""Bad requests derived from the schema: every agent-side method, each field mutated.

For each request and notification an agent answers (``acp_v1.methods``), a minimal
valid params object is built from the params model's JSON schema, then mutated: each
required field dropped, set to null, to values of the wrong types, to huge and odd
strings and (numbers) to values out of range; params of the wrong shape; ids of the
wrong types. :func:`mutation_lines` yields each case as one wire line; cases with a
valid id carry a unique integer id, so a test can check each gets exactly one answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from acp_v1 import methods
from acp_v1.methods import MethodSpec

__all__ = ["Case", "mutation_lines"]

HUGE = "h" * (1024 * 1024)
ODD_STRINGS = [
    "",
    "\ud800",
    "\udfff\ud800",
    "\x00",
    "../../etc/passwd",
    "\u202e\u0301" * 50,
    "😀" * 5000,
    "C:\\x",
]
WRONG_VALUES: list[object] = [None, "text", 7, 1.5, True, [], {}, [[]], {"a": {}}]
RAW_NUMBERS = ["1" + "0" * 400, "-" + "9" * 40, "1e400", "-1", "0.000001", "18446744073709551616"]
BAD_IDS = ["true", "false", "1.5", "[]", "{}", '{"a":1}']

_NAMED: dict[str, object] = {"sessionId": "sess-mutated", "cwd": "/tmp", "uri": "file:///tmp/x"}


@dataclass(frozen=True, slots=True)
class Case:
    line: bytes
    msg_id: int | None
    """The request's id (None: a notification, never answered, or a bad id)."""
    null_answer: bool = False
    """A -32600 answer with id null is expected (an id of the wrong type)."""


def _minimal(schema: dict[str, Any], defs: dict[str, Any], name: str = "") -> object:
    """A small instance of ``schema``: required members only, the first alternative."""
    if "$ref" in schema:
        return _minimal(defs[schema["$ref"].rsplit("/", 1)[1]], defs, name)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("oneOf", "anyOf"):
        if key in schema:
            options = [o for o in schema[key] if o.get("type") != "null"]
            return _minimal(options[0], defs, name) if options else None
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props: dict[str, Any] = schema.get("properties", {})
        return {k: _minimal(props[k], defs, k) for k in schema.get("required", []) if k in props}
    if kind == "string":
        return _NAMED.get(name, "x")
    if kind == "integer":
        return 1
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    return None


def _field_types(schema: dict[str, Any], defs: dict[str, Any]) -> set[str]:
    if "$ref" in schema:
        return _field_types(defs[schema["$ref"].rsplit("/", 1)[1]], defs)
    found: set[str] = set()
    for key in ("oneOf", "anyOf"):
        for option in schema.get(key, []):
            found |= _field_types(option, defs)
    if "type" in schema:
        found.add(str(schema["type"]))
    return found


def _params_cases(spec: MethodSpec) -> Iterator[str]:
    """Params JSON texts: the minimal valid one, then its mutations."""
    schema = TypeAdapter(spec.params).json_schema(by_alias=True)
    defs: dict[str, Any] = schema.get("$defs", {})
    base = _minimal(schema, defs)
    assert isinstance(base, dict), spec.method
    dump = json.dumps
    yield dump(base)
    yield dump({**base, "_meta": {"deep": [[[[{"x": None}]]]], "n": 2**70}, "unknownField": 1})
    yield from ("[]", '"params"', "5", "null", "[1,2]")
    props: dict[str, Any] = schema.get("properties", {})
    required = [k for k in schema.get("required", []) if k in props]
    for field in required:
        types = _field_types(props[field], defs)
        yield dump({k: v for k, v in base.items() if k != field})
        for value in WRONG_VALUES:
            yield dump({**base, field: value})
        if "string" in types:
            yield dump({**base, field: HUGE})
            for odd in ODD_STRINGS:
                yield dump({**base, field: odd})
        if types & {"integer", "number"}:
            for raw in RAW_NUMBERS:
                yield dump({**base, field: 0}).replace(f'"{field}": 0', f'"{field}": {raw}')
        if "array" in types:
            yield dump({**base, field: [None, 1, "x", {}, [[]]]})
            yield dump({**base, field: [{"type": "text"}] * 200})


def _specs() -> list[MethodSpec]:
    return [*methods.AGENT_REQUESTS.values(), *methods.AGENT_NOTIFICATIONS.values()]


def mutation_lines(first_id: int = 1000) -> Iterator[Case]:
    """Every case, in a fixed order (``session/new`` with a valid cwd creates sessions;
    ``logout`` comes in the order the table lists it, and later methods then answer
    for a logged-out connection: still never -32603)."""
    msg_id = first_id
    for spec in _specs():
        request = spec.kind == "request"
        head = f'{{"jsonrpc":"2.0","method":{json.dumps(spec.method)}'
        for params in _params_cases(spec):
            if request:
                msg_id += 1
                line = f'{{"jsonrpc":"2.0","id":{msg_id},"method":{json.dumps(spec.method)},"params":{params}}}'
                yield Case(line.encode(), msg_id)
            else:  # a notification, whatever its params (scalar ones too): never answered
                yield Case(f'{head},"params":{params}}}'.encode(), None)
        if request:
            for bad in BAD_IDS:
                line = f'{{"jsonrpc":"2.0","id":{bad},"method":{json.dumps(spec.method)},"params":{{}}}}'
                yield Case(line.encode(), None, null_answer=True)
