"""What changed in the protocol between two versions of the vendored ACP schema.

Every item of a schema version (method, type, field, union value) gets a status:
``stable`` when the stable file has it, ``unstable`` when only the unstable file does.
Comparing the statuses of two versions gives the changelog: added, removed, moved
between unstable and stable, plus required-ness changes of fields. Fields and union
values are only compared when their parent exists in both versions, and their moves
between unstable and stable only when the parent is stable in both, so that a new or
promoted type is one line instead of one line per field.

``python -m codegen.changelog OLD_DIR NEW_DIR`` prints the report for two schema folders.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from .ir import SchemaSet, methods

Status = Literal["stable", "unstable"]
Section = Literal["methods", "types", "fields", "values"]
What = Literal["added", "removed", "to_stable", "to_unstable", "now_required", "now_optional"]

SECTIONS: dict[Section, str] = {
    "methods": "Methods",
    "types": "Types",
    "fields": "Fields",
    "values": "Enum and union values",
}
WHAT_TEXT: dict[What, str] = {
    "added": "added",
    "removed": "removed",
    "to_stable": "moved to stable",
    "to_unstable": "moved back to unstable",
    "now_required": "now required",
    "now_optional": "now optional",
}
NO_CHANGES = "No protocol changes."

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Change:
    """One protocol change. ``name`` is ``session/new``, ``ToolCall``, ``ToolCall.title``
    or ``SessionUpdate[tool_call].title``, or ``ToolKind[read]`` for a union value."""

    section: Section
    what: What
    name: str
    detail: str = ""
    status: Status | None = None
    """For added / removed items: the status in the version that has the item."""

    def render(self) -> str:
        text = f"- {WHAT_TEXT[self.what]}: {self.name}"
        if self.detail:
            text += f" ({self.detail})"
        if self.status is not None:
            text += f" [{'was ' if self.what == 'removed' else ''}{self.status}]"
        return text


@dataclass(frozen=True, slots=True)
class Changelog:
    """All changes between two schema versions, in a stable order."""

    changes: tuple[Change, ...]
    old_label: str = ""
    new_label: str = ""

    def __bool__(self) -> bool:
        return bool(self.changes)

    def names(self, section: Section, what: What) -> set[str]:
        """The names of the changes of one kind, e.g. every method added."""
        return {c.name for c in self.changes if c.section == section and c.what == what}

    def render(self) -> str:
        if not self.changes:
            return NO_CHANGES
        lines = ["ACP protocol changes"]
        if self.old_label or self.new_label:
            lines[0] += f": {self.old_label or '?'} -> {self.new_label or '?'}"
        lines.append(f"({len(self.changes)} changes)")
        for section, title in SECTIONS.items():
            body = [c.render() for c in self.changes if c.section == section]
            if body:
                lines += ["", f"## {title}", *body]
        return "\n".join(lines)


@dataclass(slots=True)
class _Snapshot:
    """The items of one schema version with their status."""

    methods: dict[tuple[str, str, str], Status] = field(default_factory=dict)
    types: dict[str, Status] = field(default_factory=dict)
    variants: dict[tuple[str, str], Status] = field(default_factory=dict)
    fields: dict[tuple[str, str], Status] = field(default_factory=dict)
    required: set[tuple[str, str]] = field(default_factory=set)
    parents: dict[str, Status] = field(default_factory=dict)
    """Type names and ``Union[value]`` member names: what ``fields`` hang off."""
    bases: dict[tuple[str, str], str] = field(default_factory=dict)


def _status(in_stable: bool) -> Status:
    return "stable" if in_stable else "unstable"


def _members(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Union members by identity: the tag value, the constant, or the title."""
    out: dict[str, dict[str, Any]] = {}
    for member in [*schema.get("oneOf", []), *schema.get("anyOf", [])]:
        tags = [str(p["const"]) for p in member.get("properties", {}).values() if "const" in p]
        if "const" in member:
            key = str(member["const"])
        elif tags:
            key = tags[0]
        else:
            key = str(member.get("title") or member.get("type") or "?")
        unique, n = key, 1
        while unique in out:
            n += 1
            unique = f"{key}#{n}"
        out[unique] = member
    return out


def _add_fields(snap: _Snapshot, owner: str, unstable: dict[str, Any], stable: Any) -> None:
    stable_props = stable.get("properties", {}) if isinstance(stable, dict) else {}
    props = {**stable_props, **unstable.get("properties", {})}
    required = set(unstable.get("required", [])) | set(
        stable.get("required", []) if isinstance(stable, dict) else []
    )
    for name, prop in props.items():
        if owner.endswith("]") and isinstance(prop, dict) and "const" in prop:
            continue  # the member's tag: its identity, not a field
        snap.fields[(owner, name)] = _status(name in stable_props)
        if name in required:
            snap.required.add((owner, name))


def _snapshot(schemas: SchemaSet) -> _Snapshot:
    snap = _Snapshot()
    for m in methods(schemas):
        snap.methods[(m.name, m.side, m.kind)] = _status(not m.unstable)
    stable_defs: dict[str, Any] = schemas.stable.get("$defs", {})
    all_defs: dict[str, Any] = {**stable_defs, **schemas.unstable.get("$defs", {})}
    for name, schema in all_defs.items():
        stable = stable_defs.get(name)
        snap.types[name] = snap.parents[name] = _status(stable is not None)
        _add_fields(snap, name, schema, stable)
        stable_members = _members(stable) if stable is not None else {}
        for key, member in {**stable_members, **_members(schema)}.items():
            in_stable = stable_members.get(key)
            snap.variants[(name, key)] = snap.parents[f"{name}[{key}]"] = _status(
                in_stable is not None
            )
            refs = [r["$ref"] for r in member.get("allOf", []) if "$ref" in r]
            if "$ref" in member:
                refs.append(member["$ref"])
            if refs:
                snap.bases[(name, key)] = ", ".join(r.rsplit("/", 1)[-1] for r in refs)
            _add_fields(snap, f"{name}[{key}]", member, in_stable)
    return snap


def _compare(old: dict[K, Status], new: dict[K, Status]) -> Iterator[tuple[K, What, Status]]:
    """(key, what, status of the version holding it) for every key whose status changed."""
    for key in sorted(old.keys() | new.keys(), key=repr):
        before, after = old.get(key), new.get(key)
        if before is None and after is not None:
            yield key, "added", after
        elif after is None and before is not None:
            yield key, "removed", before
        elif before == "unstable" and after == "stable":
            yield key, "to_stable", after
        elif before == "stable" and after == "unstable":
            yield key, "to_unstable", after


def _parented(
    old: _Snapshot, new: _Snapshot, items: Iterator[tuple[str, str, What, Status]]
) -> Iterator[tuple[str, str, What, Status]]:
    """Keep changes whose parent exists in both versions; moves only under a stable parent."""
    for parent, item, what, status in items:
        if parent not in old.parents or parent not in new.parents:
            continue
        if what in ("to_stable", "to_unstable") and not (
            old.parents[parent] == new.parents[parent] == "stable"
        ):
            continue
        yield parent, item, what, status


def diff_schemas(
    old: SchemaSet, new: SchemaSet, *, old_label: str = "", new_label: str = ""
) -> Changelog:
    """The protocol changes from ``old`` to ``new``."""
    a, b = _snapshot(old), _snapshot(new)
    changes: list[Change] = []
    for (name, side, kind), what, status in _compare(a.methods, b.methods):
        changes.append(Change("methods", what, name, f"{side} {kind}", _mark(what, status)))
    for type_name, what, status in _compare(a.types, b.types):
        changes.append(Change("types", what, type_name, "", _mark(what, status, always=True)))
    variant_items = ((u, k, w, s) for (u, k), w, s in _compare(a.variants, b.variants))
    for union, key, what, status in _parented(a, b, variant_items):
        base = b.bases.get((union, key), "") if what == "added" else ""
        detail = f"extends {base}" if base else ""
        changes.append(Change("values", what, f"{union}[{key}]", detail, _mark(what, status)))
    field_items = ((o, f, w, s) for (o, f), w, s in _compare(a.fields, b.fields))
    for owner, name, what, status in _parented(a, b, field_items):
        detail = ""
        if what == "added":
            detail = "required" if (owner, name) in b.required else "optional"
        changes.append(Change("fields", what, f"{owner}.{name}", detail, _mark(what, status)))
    for owner, name in sorted(a.fields.keys() & b.fields.keys()):
        was, now = (owner, name) in a.required, (owner, name) in b.required
        if was != now and owner in a.parents and owner in b.parents:
            changes.append(
                Change("fields", "now_required" if now else "now_optional", f"{owner}.{name}")
            )
    order = list(WHAT_TEXT)
    changes.sort(key=lambda c: (list(SECTIONS).index(c.section), order.index(c.what), c.name))
    return Changelog(tuple(changes), old_label, new_label)


def _mark(what: What, status: Status, *, always: bool = False) -> Status | None:
    """Added / removed items say whether they are (were) unstable; types say both ways."""
    if what not in ("added", "removed"):
        return None
    return status if always or status == "unstable" else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen.changelog", description=__doc__)
    parser.add_argument("old_dir", type=Path, help="folder with the older schema files")
    parser.add_argument("new_dir", type=Path, help="folder with the newer schema files")
    args = parser.parse_args(argv)
    try:
        old, new = SchemaSet.load(args.old_dir), SchemaSet.load(args.new_dir)
        log = diff_schemas(old, new, old_label=str(args.old_dir), new_label=str(args.new_dir))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        # json.JSONDecodeError is a ValueError; the rest come from a malformed schema.
        print(f"changelog: cannot compare schemas: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(log.render() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
