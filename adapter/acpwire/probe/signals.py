"""What the client said about itself in ``initialize``, as plain flags.

Read from the wire form of the typed request (``model_dump(by_alias=True)``) rather than
from attributes, so the same code reads requests parsed by bindings of any schema
version: a field those bindings do not know was already dropped by the parser, which
is right, because the agent cannot send what its bindings cannot express.

Protocol rule applied throughout (``initialization.mdx``): an omitted capability is
unsupported; a "marker" capability (``elicitation.form``, ``session.notices``...) is
supported when present as an object, even ``{}``, and unsupported when omitted or null.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import BaseModel

Wire = Mapping[str, object]
_EMPTY: Wire = {}


def _obj(parent: Wire, key: str) -> Wire:
    value = parent.get(key)
    return value if isinstance(value, Mapping) else _EMPTY


def _marker(parent: Wire, key: str) -> bool:
    return isinstance(parent.get(key), Mapping)


def _flag(parent: Wire, key: str) -> bool:
    return parent.get(key) is True


@dataclass(frozen=True, slots=True)
class ClientIdentity:
    """``clientInfo``: name, title, version (the protocol does not require it yet)."""

    name: str
    title: str | None = None
    version: str | None = None


@dataclass(frozen=True, slots=True)
class ClientSignals:
    """Every client capability the probe reads; all False means "supports nothing"."""

    fs_read: bool = False
    fs_write: bool = False
    terminal: bool = False
    auth_terminal: bool = False
    elicitation_form: bool = False
    elicitation_url: bool = False
    config_boolean: bool = False
    notices: bool = False
    compaction: bool = False
    plan: bool = False
    """Unstable ``clientCapabilities.plan``: ``plan_update`` / ``plan_removed``."""
    subagents: bool = False
    """Unstable ``clientCapabilities.subagents``: subagent and session-message updates."""
    terminal_output_meta: bool = False
    """Zed's ``_meta.terminal_output``: tool-call ``_meta`` may stream terminal output."""
    terminal_auth_meta: bool = False
    """The pre-``auth.terminal`` ``_meta["terminal-auth"]`` flag (Zed, JetBrains 2025.3)."""
    air_capabilities: frozenset[str] | None = None
    """JetBrains AIR's ``_meta.jetbrains.air.capabilities``; None when AIR is absent."""
    meta_keys: frozenset[str] = field(default_factory=frozenset)
    """Top-level keys of ``clientCapabilities._meta``, for the log."""

    @classmethod
    def from_wire(cls, caps: object) -> ClientSignals:
        """Read a ``clientCapabilities`` object; None (or any non-object) is "nothing"."""
        if not isinstance(caps, Mapping):
            return cls()
        fs = _obj(caps, "fs")
        session = _obj(caps, "session")
        elicitation = _obj(caps, "elicitation")
        meta = _obj(caps, "_meta")
        return cls(
            fs_read=_flag(fs, "readTextFile"),
            fs_write=_flag(fs, "writeTextFile"),
            terminal=_flag(caps, "terminal"),
            auth_terminal=_flag(_obj(caps, "auth"), "terminal"),
            elicitation_form=_marker(elicitation, "form"),
            elicitation_url=_marker(elicitation, "url"),
            config_boolean=_marker(_obj(session, "configOptions"), "boolean"),
            notices=_marker(session, "notices"),
            compaction=_marker(session, "compaction"),
            plan=_marker(caps, "plan"),
            subagents=_marker(caps, "subagents"),
            terminal_output_meta=_flag(meta, "terminal_output"),
            terminal_auth_meta=_flag(meta, "terminal-auth"),
            air_capabilities=_air_capabilities(meta),
            meta_keys=frozenset(str(k) for k in meta),
        )


def _air_capabilities(meta: Wire) -> frozenset[str] | None:
    # claude-agent-acp src/air-extension.ts: AIR is present when _meta.jetbrains.air is an
    # object; its capability list counts only with an integer version >= 1.
    air = _obj(meta, "jetbrains").get("air")
    if not isinstance(air, Mapping):
        return None
    version = air.get("version")
    listed = air.get("capabilities")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        return frozenset()
    if not isinstance(listed, list):
        return frozenset()
    return frozenset(c for c in listed if isinstance(c, str))


def read_initialize(params: BaseModel) -> tuple[ClientIdentity | None, ClientSignals]:
    """Identity and capability flags from a typed ``InitializeRequest`` of any bindings."""
    wire = params.model_dump(mode="json", by_alias=True, exclude_none=True)
    info = wire.get("clientInfo")
    identity: ClientIdentity | None = None
    if isinstance(info, Mapping) and isinstance(info.get("name"), str):
        title = info.get("title")
        version = info.get("version")
        identity = ClientIdentity(
            name=str(info["name"]),
            title=title if isinstance(title, str) else None,
            version=version if isinstance(version, str) else None,
        )
    return identity, ClientSignals.from_wire(wire.get("clientCapabilities"))
