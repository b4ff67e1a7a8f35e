"""The vocabulary of :mod:`.shape`: what a schema member is, and what its transforms mark.

Small predicates and names over JSON schema fragments (a member's tag, the key of a
union, whether a member is a scalar constant or a catch-all), the error a transform
raises when the schema no longer looks as it expects, and the markers it leaves for the
generator and for :mod:`.ir`.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "JSON",
    "REJECT_KNOWN",
    "UNKNOWN_TYPE",
    "ShapeError",
    "is_catch_all_scalar",
    "is_scalar",
    "is_scalar_const",
    "pascal",
    "ref_name",
    "tag_of",
    "union_key",
    "unknown",
]

JSON = dict[str, Any]

#: Where the generated package defines :class:`Unknown` (``{package}`` is filled in).
UNKNOWN_TYPE = "{package}._open.Unknown"


#: The key, on a catch-all's tag property, naming the union and the tags its catch-all
#: must refuse (read by ``ir.open_unions``; datamodel-code-generator ignores it).
REJECT_KNOWN = "x-acpwire-reject-known"


def unknown(package: str) -> JSON:
    """A string the protocol does not define, typed by the generated ``Unknown`` class."""
    return {"type": "string", "customTypePath": UNKNOWN_TYPE.format(package=package)}


class ShapeError(Exception):
    """The schema no longer looks the way a transform expects."""


def pascal(text: str) -> str:
    """``agent_message_chunk`` -> ``AgentMessageChunk``; ``date-time`` -> ``DateTime``."""
    parts = re.split(r"[^0-9A-Za-z]+", text)
    return "".join(p[:1].upper() + p[1:] for p in parts if p)


def ref_name(member: JSON) -> str | None:
    refs = [m["$ref"] for m in member.get("allOf", []) if "$ref" in m]
    if "$ref" in member:
        refs.append(member["$ref"])
    if len(refs) > 1:
        raise ShapeError(f"member extends several definitions: {refs}")
    return refs[0].rsplit("/", 1)[-1] if refs else None


def tag_of(member: JSON) -> tuple[str, Any] | None:
    for name, prop in member.get("properties", {}).items():
        if "const" in prop:
            return name, prop["const"]
    return None


def union_key(schema: JSON) -> str | None:
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return key
    return None


def is_scalar_const(member: JSON) -> bool:
    return "const" in member and member.get("type") in ("string", "integer")


def is_scalar(member: JSON) -> bool:
    return (
        "type" in member
        and member["type"] not in ("object",)
        and "properties" not in member
        and "allOf" not in member
    )


def is_catch_all_scalar(member: JSON) -> bool:
    return member.get("title", "").lower() == "other" and member.get("type") in (
        "string",
        "integer",
    )
