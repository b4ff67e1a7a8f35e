"""What a generated bindings package knows, read by introspection.

The probe never trusts a hand-kept list of "what the protocol has": it asks the bindings.
Codegen names things mechanically (``codegen/shape.py``), so the facts live at stable
places in any generated package: the ``Known*`` literal aliases for open enums, the
``KnownSessionUpdate`` discriminated union (each member's tag is the default of its
``session_update`` field), the capability models' wire aliases, and ``methods.METHODS``.
Taking the models module as a parameter lets tests read bindings generated from older
schemas next to the committed ``acp_v1``.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Annotated, Literal, cast, get_args, get_origin

from pydantic import BaseModel

Side = Literal["agent", "client", "protocol", "proxy", "both"]
Kind = Literal["request", "notification"]

#: Sides whose methods the agent may send *to* the client.
_CLIENT_HANDLED: frozenset[str] = frozenset({"client", "both", "protocol"})


class SchemaIntrospectionError(Exception):
    """A bindings package does not have the shape this module reads."""


@dataclass(frozen=True, slots=True)
class MethodInfo:
    """One row of a bindings package's method table, reduced to what the probe needs."""

    name: str
    side: Side
    kind: Kind
    unstable: bool


@dataclass(frozen=True, eq=False)
class SchemaFeatures:
    """The protocol surface one generated bindings package can express.

    The facts read from ``session/update``, permission and tool models are read on first
    use: the bindings import those models lazily, and answering ``initialize`` needs none
    of them. :func:`read_features` reads everything at once unless asked to be lazy.
    """

    package: str
    """Import name of the bindings package (``acp_v1``)."""
    protocol_version: int
    """The ``protocolVersion`` the bindings speak (``methods.PROTOCOL_VERSION``)."""
    client_capabilities: frozenset[str]
    """Wire names of the ``ClientCapabilities`` fields (``fs``, ``terminal``, ``_meta``...)."""
    client_session_capabilities: frozenset[str]
    """Wire names of the ``ClientSessionCapabilities`` fields (``configOptions``...)."""
    methods: tuple[MethodInfo, ...]
    models: ModuleType = field(repr=False)
    """The models module the lazy facts are read from."""

    @functools.cached_property
    def update_tags(self) -> frozenset[str]:
        """Tags of the ``session/update`` variants the bindings know (stable and unstable)."""
        return _update_tags(self.models)

    @functools.cached_property
    def permission_option_kinds(self) -> tuple[str, ...]:
        """``PermissionOptionKind`` values, in schema order."""
        return _literal_values(self.models, "KnownPermissionOptionKind")

    @functools.cached_property
    def tool_kinds(self) -> tuple[str, ...]:
        """``ToolKind`` values, in schema order."""
        return _literal_values(self.models, "KnownToolKind")

    def _facts(self) -> tuple[object, ...]:
        return (
            self.package,
            self.protocol_version,
            self.client_capabilities,
            self.client_session_capabilities,
            self.methods,
            self.update_tags,
            self.permission_option_kinds,
            self.tool_kinds,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SchemaFeatures) and self._facts() == other._facts()

    def __hash__(self) -> int:
        return hash(self._facts())

    def has_update(self, tag: str) -> bool:
        return tag in self.update_tags

    @property
    def has_reject_always(self) -> bool:
        return "reject_always" in self.permission_option_kinds

    def client_method(self, name: str) -> MethodInfo | None:
        """The row for a method the client handles (request preferred), or None."""
        rows = [m for m in self.methods if m.name == name and m.side in _CLIENT_HANDLED]
        rows.sort(key=lambda m: m.kind != "request")
        return rows[0] if rows else None


def _alias_value(module: ModuleType, name: str) -> object:
    """The right-hand side of a ``TypeAliasType`` defined in the models module."""
    alias = getattr(module, name, None)
    if alias is None:
        raise SchemaIntrospectionError(f"{module.__name__} defines no {name}")
    value = getattr(alias, "__value__", None)
    if value is None:
        raise SchemaIntrospectionError(f"{module.__name__}.{name} is not a type alias")
    return value


def _strip_annotated(tp: object) -> object:
    return get_args(tp)[0] if get_origin(tp) is Annotated else tp


def _literal_values(module: ModuleType, name: str) -> tuple[str, ...]:
    value = _strip_annotated(_alias_value(module, name))
    if get_origin(value) is not Literal:
        raise SchemaIntrospectionError(f"{module.__name__}.{name} is not a Literal alias")
    values = get_args(value)
    if not all(isinstance(v, str) for v in values):
        raise SchemaIntrospectionError(f"{module.__name__}.{name} has non-string values")
    return tuple(str(v) for v in values)


def _update_tags(module: ModuleType) -> frozenset[str]:
    union = _strip_annotated(_alias_value(module, "KnownSessionUpdate"))
    tags: set[str] = set()
    for member in get_args(union):
        fields = getattr(member, "model_fields", None)
        if not isinstance(fields, dict) or "session_update" not in fields:
            raise SchemaIntrospectionError(
                f"{module.__name__}.KnownSessionUpdate member {member!r} has no session_update field"
            )
        tag = fields["session_update"].default
        if not isinstance(tag, str):
            raise SchemaIntrospectionError(
                f"{module.__name__}.{member.__name__}.session_update has no string default"
            )
        tags.add(tag)
    if not tags:
        raise SchemaIntrospectionError(f"{module.__name__}.KnownSessionUpdate has no members")
    return frozenset(tags)


def _wire_fields(module: ModuleType, name: str) -> frozenset[str]:
    model = getattr(module, name, None)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise SchemaIntrospectionError(f"{module.__name__} defines no model {name}")
    return frozenset(info.alias or field for field, info in model.model_fields.items())


def _methods(package: str) -> tuple[int, tuple[MethodInfo, ...]]:
    try:
        methods = importlib.import_module(f"{package}.methods")
    except ImportError as exc:
        raise SchemaIntrospectionError(f"cannot import {package}.methods: {exc}") from exc
    version = getattr(methods, "PROTOCOL_VERSION", None)
    table = getattr(methods, "METHODS", None)
    if not isinstance(version, int) or not isinstance(table, tuple):
        raise SchemaIntrospectionError(f"{package}.methods lacks PROTOCOL_VERSION or METHODS")
    return version, tuple(_method_rows(package, table))


def _method_rows(package: str, table: Iterable[object]) -> Iterable[MethodInfo]:
    for spec in table:
        name = getattr(spec, "method", None)
        side = getattr(spec, "side", None)
        kind = getattr(spec, "kind", None)
        unstable = getattr(spec, "unstable", None)
        if (
            not isinstance(name, str)
            or side not in ("agent", "client", "protocol", "proxy", "both")
            or kind not in ("request", "notification")
            or not isinstance(unstable, bool)
        ):
            raise SchemaIntrospectionError(
                f"{package}.methods.METHODS has a malformed row {spec!r}"
            )
        yield MethodInfo(name, cast(Side, side), cast(Kind, kind), unstable)


def read_features(models: ModuleType, *, lazy: bool = False) -> SchemaFeatures:
    """Introspect a generated ``<package>.models`` module (and its sibling ``methods``).

    Malformed bindings raise :class:`SchemaIntrospectionError` here, or, with ``lazy``,
    when the missing fact is first read.
    """
    package = models.__name__.rpartition(".")[0]
    if not package:
        raise SchemaIntrospectionError(f"{models.__name__} is not a module inside a package")
    version, methods = _methods(package)
    features = SchemaFeatures(
        package=package,
        protocol_version=version,
        client_capabilities=_wire_fields(models, "ClientCapabilities"),
        client_session_capabilities=_wire_fields(models, "ClientSessionCapabilities"),
        methods=methods,
        models=models,
    )
    if not lazy:
        features._facts()
    return features


@functools.cache
def default_features() -> SchemaFeatures:
    """The features of the committed ``acp_v1`` bindings (read once per process, each
    fact when first needed)."""
    from acp_v1 import models

    return read_features(models, lazy=True)
