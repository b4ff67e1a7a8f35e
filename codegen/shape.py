"""Shape the published ACP JSON schema into the input we hand to datamodel-code-generator.

Every fix-up happens here, on JSON, and asserts what it expects to find, so that a schema
change that invalidates an assumption fails loudly instead of generating wrong Python.
The transforms:

* drop the JSON-RPC envelope definitions (``x-docs-ignore``) and the top-level ``anyOf``;
  codegen emits its own typed envelopes;
* name every object member of a union after the union and its tag value or title
  (``SessionUpdate`` + ``agent_message_chunk`` -> ``SessionUpdateAgentMessageChunk``),
  so no generated class is ever numbered;
* move the properties a union's parent declares into each member (also one level down,
  for a member that is a union itself), and expand a member that extends another union
  into one member per inner variant;
* turn unions of string or integer constants into an open enum: a ``Known*`` literal
  plus, for strings, ``acp_v1._open.Unknown`` (the base type for integers), so an unknown
  value is kept when decoded but a typo is refused when constructing;
* turn the tagged unions that the protocol calls extensible into a discriminated union of
  the known members followed by a catch-all ``*Other`` model that keeps unknown variants
  (its tag an ``Unknown`` too, so that comparing the tag with a known value narrows);
* type the tag of the catch-alls the schema itself defines (a ``title: other`` member
  whose tag is a plain string, its siblings' a constant) as ``Unknown`` as well, marked
  with :data:`REJECT_KNOWN` so that their model refuses the siblings' tags.
"""

from __future__ import annotations

import copy

from .vocabulary import (
    JSON,
    REJECT_KNOWN,
    ShapeError,
    is_catch_all_scalar,
    is_scalar,
    is_scalar_const,
    pascal,
    ref_name,
    tag_of,
    union_key,
    unknown,
)

__all__ = ["OPEN_TAGGED_UNIONS", "REJECT_KNOWN", "ShapeError", "pascal", "shape"]

#: Tagged unions whose unknown tags must be preserved, not rejected, and that have no
#: catch-all in the schema: codegen synthesizes ``<Name>Other``. ``SessionUpdate`` is the
#: one clients meet every few milliseconds; the others carry a ``title: other`` member in
#: the schema itself (its tag typed by :func:`_type_catch_all_tag`).
OPEN_TAGGED_UNIONS = ("SessionUpdate",)


def _open_enum(defs: dict[str, JSON], name: str, schema: JSON, key: str, package: str) -> None:
    """A union of constants (and maybe a catch-all) becomes ``Known<Name> | Unknown`` for
    strings, ``Known<Name> | <base type>`` for integers (where applications define their
    own codes, such as JSON-RPC error codes)."""
    members = schema[key]
    consts = [m for m in members if is_scalar_const(m)]
    base = consts[0]["type"]
    if any(m.get("type") != base for m in members):
        raise ShapeError(f"{name}: mixed constant types")
    known = f"Known{name}"
    if known in defs:
        raise ShapeError(f"{name}: {known} already defined")
    defs[known] = {
        "description": f"The values of `{name}` that this version of the protocol defines.",
        "type": base,
        "enum": [m["const"] for m in consts],
    }
    described = "; ".join(
        f"`{m['const']}`: {m.get('description', m.get('title', ''))}" for m in consts
    )
    defs[name] = {
        "description": (schema.get("description", "") + "\n\n" + described).strip()
        + (
            "\n\nUnknown values are kept as `Unknown` objects."
            if base == "string"
            else "\n\nUnknown values are kept as plain values."
        ),
        "anyOf": [
            {"$ref": f"#/$defs/{known}"},
            unknown(package) if base == "string" else {"type": base},
        ],
    }


def _strip_scalar_titles(schema: JSON, key: str) -> None:
    """Scalar members keep no title, so they stay inline (``None | int | str``)."""
    for member in schema[key]:
        if is_scalar(member):
            member.pop("title", None)


def _member_name(union: str, member: JSON) -> str:
    tag = tag_of(member)
    if tag is not None:
        return union + pascal(str(tag[1]))
    if "title" in member:
        return union + pascal(member["title"])
    ref = ref_name(member)
    if ref is not None:
        return ref
    raise ShapeError(f"{union}: cannot name member {sorted(member)}")


def _distribute(union_schema: JSON, key: str) -> None:
    """Move the parent's own properties (and its openness) into each object member."""
    props = union_schema.pop("properties", None)
    required = union_schema.pop("required", None)
    union_schema.pop("type", None)
    if not props:
        return
    extra = union_schema.pop("additionalProperties", None)
    for member in union_schema[key]:
        if extra is not None:
            member.setdefault("additionalProperties", extra)
        merged = dict(props)
        merged.update(member.get("properties", {}))
        member["properties"] = merged
        member["required"] = sorted(set(required or []) | set(member.get("required", [])))
        member.setdefault("type", "object")


def _expand_nested(defs: dict[str, JSON], union: str, member: JSON, name: str) -> list[JSON]:
    """A member extending another union becomes one member per inner variant."""
    ref = ref_name(member)
    inner = defs.get(ref) if ref else None
    inner_key = union_key(inner) if inner else None
    if inner is None or inner_key is None or ref is None:
        return [member]
    own = {k: v for k, v in member.items() if k not in ("allOf", "$ref", "title")}
    out: list[JSON] = []
    for variant in inner[inner_key]:
        merged = copy.deepcopy(variant)
        props = dict(merged.get("properties", {}))
        props.update(own.get("properties", {}))
        merged["properties"] = props
        merged["required"] = sorted(set(merged.get("required", [])) | set(own.get("required", [])))
        merged["type"] = "object"
        suffix = (
            variant["title"].removeprefix(ref)
            if variant.get("title", "").startswith(ref)
            else pascal(variant.get("title", ""))
        )
        merged["title"] = name + suffix
        if "description" in own:
            merged["description"] = own["description"]
        out.append(merged)
    return out


def _type_catch_all_tag(union: str, member: JSON, siblings: list[JSON], package: str) -> None:
    """The tag of a schema-defined catch-all (``title: other``): a plain string while its
    siblings have constants there. It becomes an ``Unknown`` (description kept) marked
    with the siblings' tags, so that the model refuses them and the tag narrows."""
    tags = [tag for sibling in siblings if sibling is not member and (tag := tag_of(sibling))]
    names = {name for name, _ in tags}
    if len(names) != 1:
        raise ShapeError(f"{union}: catch-all siblings tag {sorted(names)}, expected one field")
    (name,) = names
    prop = member.get("properties", {}).get(name)
    if prop is None or "const" in prop or prop.get("type") != "string":
        raise ShapeError(f"{union}: catch-all tag {name} is not a plain string: {prop}")
    typed = unknown(package)
    if "description" in prop:
        typed["description"] = prop["description"]
    typed[REJECT_KNOWN] = {"union": union, "tag": name, "known": sorted(str(v) for _, v in tags)}
    member["properties"][name] = typed


def _name_members(defs: dict[str, JSON], union: str, schema: JSON, key: str, package: str) -> None:
    members: list[JSON] = []
    untagged: list[JSON] = []
    defaulted_tag = False
    for member in schema[key]:
        if ("$ref" in member and len(member) == 1) or is_scalar(member):
            members.append(member)
            continue
        name = _member_name(union, member)
        if member.get("title", "").lower() == "other":
            member["additionalProperties"] = True
            member.pop("not", None)
            _type_catch_all_tag(union, member, schema[key], package)
        if name in defs and ref_name(member) == name:
            # The member only adds its tag to a definition of the same name: put the tag
            # on that definition (with a default) and reference it.
            tag = tag_of(member)
            if tag is not None:
                prop = dict(member["properties"][tag[0]])
                prop["default"] = tag[1]
                defs[name].setdefault("properties", {})[tag[0]] = prop
                defaulted_tag = True
                members.append({"$ref": f"#/$defs/{name}"})
            else:
                untagged.append({"$ref": f"#/$defs/{name}"})
            continue
        if name in defs:
            raise ShapeError(f"{union}: member name {name} collides with a definition")
        member["title"] = name
        members.append(member)
    # A union without a discriminator whose tagged members got a defaulted tag: the
    # members without a tag go first, so that input lacking the tag (the protocol's
    # default kind, such as a stdio MCP server or an agent auth method) is not taken for
    # a tagged member with its default. Tagged input still picks the tagged member: it
    # sets more fields.
    schema[key] = (
        untagged + members
        if defaulted_tag and "discriminator" not in schema
        else members + untagged
    )


def _expand_all(defs: dict[str, JSON], union: str, schema: JSON, key: str) -> None:
    expanded: list[JSON] = []
    for member in schema[key]:
        if "title" in member and "$ref" not in member:
            expanded.extend(_expand_nested(defs, union, member, member["title"]))
        else:
            expanded.append(member)
    schema[key] = expanded


def _open_tagged_union(defs: dict[str, JSON], name: str, package: str) -> None:
    """``Name`` -> ``Known<Name>`` (discriminated) ``| <Name>Other`` (keeps unknown tags)."""
    schema = defs[name]
    disc = schema.get("discriminator", {}).get("propertyName")
    if not disc:
        raise ShapeError(f"{name}: expected a discriminated union")
    known = f"Known{name}"
    defs[known] = schema
    tags = sorted(tag_of(m)[1] for m in schema["oneOf"] if tag_of(m))  # type: ignore[index]
    defs[name] = {
        "description": schema.get("description", ""),
        "anyOf": [
            {"$ref": f"#/$defs/{known}"},
            {
                "title": f"{name}Other",
                "description": f"A `{name}` variant this version of the protocol does not know ({disc} not in {tags}); kept as is.",
                "type": "object",
                "properties": {disc: unknown(package)},
                "required": [disc],
                "additionalProperties": True,
            },
        ],
    }


def _drop_object_defaults(defs: dict[str, JSON]) -> None:
    """An object default on a model-typed field would stay a plain dict at run time
    (pydantic does not validate defaults); omitted means "all defaults" anyway, which
    for capabilities the protocol reads as "unsupported", so the field defaults to None."""

    def visit(schema: JSON) -> None:
        for prop in schema.get("properties", {}).values():
            if isinstance(prop.get("default"), dict):
                del prop["default"]
        for key in ("oneOf", "anyOf"):
            for member in schema.get(key, []):
                visit(member)

    for d in defs.values():
        visit(d)


def shape(schema: JSON, package: str = "acp_v1") -> JSON:
    """Return the shaped copy of an ACP schema document (the input is not modified);
    ``package`` is the import name of the generated package."""
    doc = copy.deepcopy(schema)
    defs: dict[str, JSON] = doc["$defs"]
    for name in [n for n, d in defs.items() if d.get("x-docs-ignore")]:
        del defs[name]
    for name in list(defs):
        schema_ = defs[name]
        key = union_key(schema_)
        if key is None:
            continue
        members = schema_[key]
        if all(is_scalar_const(m) or is_catch_all_scalar(m) for m in members) and any(
            is_scalar_const(m) for m in members
        ):
            _open_enum(defs, name, schema_, key, package)
            continue
        _strip_scalar_titles(schema_, key)
        _distribute(schema_, key)
        _name_members(defs, name, schema_, key, package)
        for member in schema_[key]:
            inner = union_key(member)
            if inner is not None and "title" in member:  # a member that is a union itself
                _distribute(member, inner)
                _name_members(defs, member["title"], member, inner, package)
    for name in list(defs):
        key = union_key(defs[name])
        if key is not None:
            _expand_all(defs, name, defs[name], key)
    _drop_object_defaults(defs)
    for name in OPEN_TAGGED_UNIONS:
        if name in defs:
            _open_tagged_union(defs, name, package)
    return {"$schema": doc.get("$schema"), "$defs": defs}
