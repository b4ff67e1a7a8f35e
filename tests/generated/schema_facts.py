"""What the vendored ACP schema says, read independently of ``codegen``.

The tests compare the generated bindings against these facts, so nothing here may
import ``codegen``: a shared bug would otherwise agree with itself.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DIR = ROOT / "schema"
GENERATED_DIR = ROOT / "generated" / "acp_v1"
# Method maps extracted from the @agentclientprotocol/sdk 2.4.0 bundle (copied verbatim),
# the same release schema/ is vendored from (schema/schema.lock.json).
REFERENCE_DIR = Path(__file__).resolve().parent / "reference"

JSON = dict[str, Any]


@cache
def schema(name: str) -> JSON:
    """``schema.json`` or ``schema.unstable.json`` from ``schema/``."""
    loaded: JSON = json.loads((SCHEMA_DIR / name).read_text())
    return loaded


def defs(unstable: bool = True) -> dict[str, JSON]:
    doc = schema("schema.unstable.json" if unstable else "schema.json")
    found: dict[str, JSON] = doc["$defs"]
    return found


def pascal(tag: str) -> str:
    """``agent_message_chunk`` -> ``AgentMessageChunk`` (the documented naming rule)."""
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^0-9A-Za-z]+", tag) if part)


def union_tags(union: str, unstable: bool = True) -> list[str]:
    """The variant tags of a union: each member's constant tag, else its title."""
    definition = defs(unstable)[union]
    members: list[JSON] = definition.get("oneOf") or definition.get("anyOf") or []
    if not members:
        raise AssertionError(f"{union} is not a union in the schema")
    tags: list[str] = []
    for member in members:
        consts = [p["const"] for p in member.get("properties", {}).values() if "const" in p]
        if consts:
            tags.append(str(consts[0]))
        elif "title" in member:
            tags.append(str(member["title"]))
        else:
            raise AssertionError(f"{union}: member without tag or title: {sorted(member)}")
    return tags


def enum_values(name: str, unstable: bool = True) -> list[str]:
    """The constants of a string enum written as a union of ``const`` members."""
    definition = defs(unstable)[name]
    members: list[JSON] = definition.get("oneOf") or definition.get("anyOf") or []
    return [str(member["const"]) for member in members if "const" in member]


def mechanical_handler(method: str) -> str:
    """``fs/read_text_file`` -> ``fs_read_text_file``; ``$/cancel_request`` -> ``cancel_request``."""
    text = re.sub(r"[/.]", "_", method.removeprefix("$/"))
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", text).lower()


def message_defs(unstable: bool) -> dict[str, tuple[str, str]]:
    """Definition name -> (``x-method``, ``x-side``) for every annotated message."""
    return {
        name: (d["x-method"], d["x-side"]) for name, d in defs(unstable).items() if "x-method" in d
    }


def reference_meta(name: str) -> JSON:
    """``meta.extracted.json`` / ``meta.unstable.extracted.json`` of the TS SDK 2.4.0 bundle."""
    loaded: JSON = json.loads((REFERENCE_DIR / name).read_text())
    return loaded
