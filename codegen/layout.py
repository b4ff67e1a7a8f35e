"""Split the generated models into modules by when a connection first needs them.

Importing ~260 pydantic model classes costs tens of milliseconds, most of an ACP
process's start-up; an agent answering ``initialize`` needs about forty of them. So the
models are generated as a package of a few modules, one per *group* of methods in the
order a connection meets them, and ``acp_v1.models`` imports each module on first use.

Each method belongs to the first group naming it exactly, else the first whose prefix
it starts with, else ``extras``. Each schema definition goes to the first group, in
:data:`GROUPS` order, whose methods reach it (through ``$ref``s from their params and
result types); definitions no method reaches go to ``extras``. A definition's
dependencies are therefore always in its own group or an earlier one: modules only
import earlier modules, never in a cycle.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .ir import Method


@dataclass(frozen=True, slots=True)
class Group:
    """One generated module: its name and the methods whose types it holds."""

    module: str
    methods: tuple[str, ...]
    """Exact method names."""
    prefixes: tuple[str, ...] = ()
    """Method name prefixes, matched after every group's exact names."""


GROUPS: tuple[Group, ...] = (
    Group("connection", ("initialize",)),
    Group("setup", ("session/new",)),
    Group("session", ("authenticate", "logout"), ("session/", "auth/", "$/")),
    Group("prompt", ("session/prompt", "session/update", "session/cancel")),
    Group("client", ("session/request_permission",), ("fs/", "terminal/")),
    Group("extras", ()),
)
FALLBACK = GROUPS[-1].module


def method_group(method: str) -> str:
    """The module holding the envelope (and first-needed types) of ``method``."""
    for group in GROUPS:
        if method in group.methods:
            return group.module
    for group in GROUPS:
        if method.startswith(group.prefixes):
            return group.module
    return FALLBACK


def _refs(schema: Any, out: set[str]) -> set[str]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "$ref" and isinstance(value, str):
                out.add(value.rsplit("/", 1)[-1])
            else:
                _refs(value, out)
    elif isinstance(schema, list):
        for value in schema:
            _refs(value, out)
    return out


def _reach(deps: dict[str, set[str]], roots: Iterable[str]) -> set[str]:
    seen: set[str] = set()
    todo = [r for r in roots if r in deps]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(deps[name])
    return seen


def assign(defs: dict[str, Any], methods: list[Method]) -> dict[str, str]:
    """Definition name -> module name, for every definition of the shaped schema."""
    deps = {name: {r for r in _refs(schema, set()) if r in defs} for name, schema in defs.items()}
    by_group: dict[str, list[str]] = {g.module: [] for g in GROUPS}
    for m in methods:
        by_group[method_group(m.name)] += [m.params] + ([m.result] if m.result else [])
    placed: dict[str, str] = {}
    for group in GROUPS:
        for name in sorted(_reach(deps, by_group[group.module]) - placed.keys()):
            placed[name] = group.module
    for name in sorted(defs.keys() - placed.keys()):
        placed[name] = FALLBACK
    return placed


@dataclass(frozen=True, slots=True)
class Layout:
    """The schema as the generator gets it, and where each class goes."""

    schema: dict[str, Any]
    """Definitions named ``module.Name``: the generator writes one module per prefix."""
    placed: dict[str, str]
    """Class or alias name -> module (the generator's per-class options are keyed
    ``module.Name``)."""

    @property
    def modules(self) -> tuple[str, ...]:
        """The modules in import order (each imports only earlier ones)."""
        used = set(self.placed.values())
        return tuple(g.module for g in GROUPS if g.module in used)


def lay_out(shaped: dict[str, Any], methods: list[Method]) -> Layout:
    """Place every definition (:func:`assign`) and qualify the schema with it."""
    return qualify(shaped, assign(shaped["$defs"], methods))


def qualify(shaped: dict[str, Any], modules: dict[str, str]) -> Layout:
    """A copy of ``shaped`` whose definitions are named ``module.Name`` (and every
    ``$ref`` with them), with the module of every class.

    An object or union member defined inline (a class or alias named by its ``title``)
    becomes a definition of its own in the union's module, so that no class lands outside the
    module layout.
    """
    defs: dict[str, Any] = {}
    placed = dict(modules)

    def rewrite(node: Any, module: str) -> Any:
        if isinstance(node, list):
            return [rewrite(value, module) for value in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                base, _, name = value.rpartition("/")
                out[key] = f"{base}/{modules[name]}.{name}" if name in modules else value
            elif key in ("anyOf", "oneOf"):
                out[key] = [hoist(member, module) for member in value]
            elif key == "properties":
                out[key] = {prop: rewrite(schema, module) for prop, schema in value.items()}
            else:
                out[key] = rewrite(value, module)
        return out

    def hoist(member: Any, module: str) -> Any:
        # Object and union members become classes or aliases; a titled reference stays
        # the referenced type.
        if not (
            isinstance(member, dict)
            and "title" in member
            and ("properties" in member or "anyOf" in member or "oneOf" in member)
        ):
            return rewrite(member, module)
        title = member["title"]
        name = f"{module}.{title}"
        if title in placed:
            raise ValueError(f"two classes are both named {title}")
        placed[title] = module
        defs[name] = rewrite({k: v for k, v in member.items() if k != "title"}, module)
        return {"$ref": f"#/$defs/{name}"}

    for name, schema in shaped["$defs"].items():
        defs[f"{modules[name]}.{name}"] = rewrite(schema, modules[name])
    out = {key: value for key, value in shaped.items() if key != "$defs"}
    out["$defs"] = defs
    return Layout(out, placed)
