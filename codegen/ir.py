"""The small typed intermediate model that codegen builds from the schema files.

Everything the templates render comes from here: the method table (read from each
message definition's ``x-method`` / ``x-side``; a method is unstable when only the
unstable schema has it) and the leniency rules (``x-deserialize-*``) per model field.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

Side = Literal["agent", "client", "protocol", "proxy", "both"]
Kind = Literal["request", "notification"]


@dataclass(frozen=True, slots=True)
class Method:
    """One protocol method: wire name, who handles it, its shape and stability."""

    name: str
    side: Side
    kind: Kind
    params: str
    result: str | None
    unstable: bool
    doc: str = ""
    """The schema's description of the method (what the handler must do), if any."""

    @property
    def handler(self) -> str:
        """Mechanical handler name: ``fs/read_text_file`` -> ``fs_read_text_file``."""
        text = self.name.removeprefix("$/")
        return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", re.sub(r"[/.]", "_", text)).lower()

    @property
    def constant(self) -> str:
        """``session/new`` -> ``SESSION_NEW``; ``$/cancel_request`` -> ``CANCEL_REQUEST``."""
        return self.handler.upper()


@dataclass(frozen=True, slots=True)
class Leniency:
    """How one field of one model recovers from bad input, from ``x-deserialize-*``."""

    model: str
    field: str
    fallback: Any
    on_error: bool
    on_null: bool
    skip_invalid_items: bool


@dataclass(slots=True)
class SchemaSet:
    """The two vendored schema files and what codegen derives from them."""

    stable: dict[str, Any]
    unstable: dict[str, Any]
    sources: dict[str, str] = field(default_factory=dict)
    """file name -> sha256, for the generated headers."""

    @classmethod
    def load(cls, folder: Path) -> SchemaSet:
        files = {
            name: (folder / name).read_bytes() for name in ("schema.json", "schema.unstable.json")
        }
        return cls(
            stable=json.loads(files["schema.json"]),
            unstable=json.loads(files["schema.unstable.json"]),
            sources={name: hashlib.sha256(data).hexdigest() for name, data in files.items()},
        )


def _message_defs(schema: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    """def name -> (method, side, role) where role is request/response/notification."""
    out: dict[str, tuple[str, str, str]] = {}
    for name, d in schema["$defs"].items():
        if "x-method" not in d:
            continue
        role = "notification"
        if name.endswith("Request"):
            role = "request"
        elif name.endswith("Response"):
            role = "response"
        out[name] = (d["x-method"], d["x-side"], role)
    return out


def method_docs(schema: Any) -> dict[str, str]:
    """Message definition name -> the description of its method.

    The schema describes each method (its obligations, such as replaying a loaded
    session before answering) on the member of the JSON-RPC message union that names
    the message definition: ``{"title": X, "description": ..., "allOf": [{"$ref": X}]}``.
    """
    out: dict[str, str] = {}

    def visit(node: Any) -> None:
        if isinstance(node, list):
            for value in node:
                visit(value)
        elif isinstance(node, dict):
            title, text, refs = node.get("title"), node.get("description"), node.get("allOf", [])
            if (
                isinstance(title, str)
                and isinstance(text, str)
                and any(r.get("$ref", "").rsplit("/", 1)[-1] == title for r in refs)
            ):
                out.setdefault(title, text)
            for value in node.values():
                visit(value)

    visit(schema)
    return out


def methods(schemas: SchemaSet) -> list[Method]:
    """The method table, sorted by side then wire name."""
    docs = method_docs(schemas.unstable)
    stable_names = {m for m, _, _ in _message_defs(schemas.stable).values()}
    by_method: dict[tuple[str, str], dict[str, Any]] = {}
    for def_name, (method, side, role) in _message_defs(schemas.unstable).items():
        entry = by_method.setdefault((method, side), {"side": side})
        entry[role] = def_name
    table: list[Method] = []
    for (method, side), entry in by_method.items():
        if "request" in entry:
            kinds: list[tuple[Kind, str, str | None]] = [
                ("request", entry["request"], entry.get("response"))
            ]
            if "notification" in entry:
                kinds.append(("notification", entry["notification"], None))
        elif "notification" in entry:
            kinds = [("notification", entry["notification"], None)]
        else:
            raise ValueError(f"{method}: a response without a request")
        for kind, params, result in kinds:
            if kind == "request" and result is None:
                raise ValueError(f"{method}: request without a response type")
            table.append(
                Method(
                    method,
                    cast(Side, side),
                    kind,
                    params,
                    result,
                    method not in stable_names,
                    docs.get(params, ""),
                )
            )
    return sorted(table, key=lambda m: (m.side, m.name, m.kind))


def _fallback(prop: dict[str, Any]) -> Any:
    if "default" in prop:
        return prop["default"]
    if prop.get("type") == "array":
        return []
    return None


def leniency(shaped: dict[str, Any]) -> list[Leniency]:
    """Every field that carries an ``x-deserialize-*`` rule, in the shaped schema."""
    out: list[Leniency] = []

    def visit(model: str, schema: dict[str, Any]) -> None:
        for prop_name, prop in schema.get("properties", {}).items():
            flags = (
                bool(prop.get("x-deserialize-default-on-error")),
                bool(prop.get("x-deserialize-default-on-null")),
                bool(prop.get("x-deserialize-skip-invalid-items")),
            )
            if any(flags):
                out.append(Leniency(model, prop_name, _fallback(prop), *flags))

    for name, d in shaped["$defs"].items():
        visit(name, d)
        for key in ("oneOf", "anyOf"):
            for member in d.get(key, []):
                if "title" in member:
                    visit(member["title"], member)
    return sorted(out, key=lambda x: (x.model, x.field))


@dataclass(frozen=True, slots=True)
class OpenUnion:
    """A tagged union that keeps unknown variants in a catch-all model whose tag is an
    ``Unknown`` refusing the known tags: ``<name>Other``, which codegen synthesizes, or
    the catch-alls the schema defines itself (``others``)."""

    name: str
    tag: str
    """The discriminator property (``sessionUpdate``)."""
    known: tuple[str, ...]
    others: tuple[str, ...] = ()
    """The schema-defined catch-all models (several when a union embeds another's
    catch-all); empty for the ``<name>Other`` that codegen synthesizes."""

    @property
    def synthesized(self) -> bool:
        """Codegen made the catch-all (and orders the union: known members first)."""
        return not self.others

    @property
    def other(self) -> str:
        return f"{self.name}Other"

    @property
    def catch_alls(self) -> tuple[str, ...]:
        """The models that keep this union's unknown variants."""
        return self.others or (self.other,)


def _synthesized(shaped: dict[str, Any], names: tuple[str, ...]) -> list[OpenUnion]:
    out: list[OpenUnion] = []
    defs = shaped["$defs"]
    for name in names:
        known = defs.get(f"Known{name}")
        if known is None:
            continue
        tag = known["discriminator"]["propertyName"]
        tags = []
        for member in known["oneOf"]:
            prop = member.get("properties", {}).get(tag, {})
            if "const" in prop:
                tags.append(prop["const"])
        out.append(OpenUnion(name, tag, tuple(sorted(tags))))
    return out


def _schema_catch_alls(shaped: dict[str, Any], marker: str) -> list[OpenUnion]:
    """The catch-alls whose tag property ``shape`` marked with ``marker``, by union: a
    model that embeds a marked tag (an expanded or distributed member) counts too."""
    found: dict[tuple[str, str, tuple[str, ...]], set[str]] = {}

    def visit(model: str, schema: dict[str, Any]) -> None:
        for prop in schema.get("properties", {}).values():
            mark = prop.get(marker)
            if mark is not None:
                key = (mark["union"], mark["tag"], tuple(mark["known"]))
                found.setdefault(key, set()).add(model)
        for union_key in ("oneOf", "anyOf"):
            for member in schema.get(union_key, []):
                if "title" in member:
                    visit(member["title"], member)

    for name, d in shaped["$defs"].items():
        visit(name, d)
    return [
        OpenUnion(union, tag, known, tuple(sorted(models)))
        for (union, tag, known), models in sorted(found.items())
    ]


def open_unions(
    shaped: dict[str, Any], names: tuple[str, ...], marker: str | None = None
) -> list[OpenUnion]:
    """The open unions of the shaped schema, with the tags of their known variants:
    ``names`` (whose catch-all codegen synthesized), then, given the ``marker`` key
    ``shape`` puts on their tags, the unions with a catch-all of the schema's own."""
    return _synthesized(shaped, names) + (_schema_catch_alls(shaped, marker) if marker else [])
