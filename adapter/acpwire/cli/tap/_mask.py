"""Secrets taken out of a traced message (the trace only: the wire is never changed).

Masked, each value replaced by :data:`MASK`:

- every param of an ``authenticate`` request but ``methodId``;
- the MCP servers' ``env`` values and ``headers`` values in the params of
  ``session/new``, ``session/load``, ``session/resume`` and ``session/fork``;
- anywhere in a message, ``env`` values whose names look like secrets (``terminal/create``
  and vendor methods), and the string values of keys inside ``_meta`` whose names look
  like secrets, at any depth (numbers and flags, such as token counts, are kept).

Names "look like secrets" by the rule the command sandbox uses
(:func:`acpwire.config.secret_names.looks_secret`: ``*_KEY``, ``*TOKEN*``, ``PASSWORD``...).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from acpwire.config.secret_names import looks_secret

__all__ = ["MASK", "SESSION_SETUP", "mask_in_place"]

MASK: Final = "***"
SESSION_SETUP: Final = frozenset({"session/new", "session/load", "session/resume", "session/fork"})
"""The requests whose params list the MCP servers an agent starts."""

_Rule = Callable[[str], bool]


def mask_in_place(message: object, *, request_method: str | None) -> bool:
    """Mask the secrets of ``message`` (a freshly parsed JSON value, changed in place);
    whether anything was masked. ``request_method``: the method when it is a request."""
    changed = False
    params = message.get("params") if isinstance(message, dict) else None
    if isinstance(params, dict):
        if request_method == "authenticate":
            for key in params:
                if key != "methodId" and params[key] != MASK:
                    params[key] = MASK
                    changed = True
        elif request_method in SESSION_SETUP and isinstance(params.get("mcpServers"), list):
            for server in params["mcpServers"]:
                if isinstance(server, dict):
                    for field in ("env", "headers"):
                        changed |= _named_values(server.get(field), _always)
    return _anywhere(message) or changed


def _always(name: str) -> bool:
    return True


def _named_values(entries: object, secret: _Rule) -> bool:
    """``[{"name": ..., "value": ...}, ...]`` or ``{name: value}``: the secret values masked."""
    changed = False
    if isinstance(entries, dict):
        for name in entries:
            if entries[name] != MASK and secret(str(name)):
                entries[name] = MASK
                changed = True
    elif isinstance(entries, list):
        for entry in entries:
            if (
                isinstance(entry, dict)
                and "value" in entry
                and entry["value"] != MASK
                and secret(str(entry.get("name", "")))
            ):
                entry["value"] = MASK
                changed = True
    return changed


def _meta(value: Any) -> bool:
    """Inside ``_meta``: the string values of keys that look secret, at any depth (a
    number or a flag is no secret: ``promptTokens: 812`` stays; under a secret-looking
    key holding an object, its own secret-looking keys are masked)."""
    changed = False
    if isinstance(value, dict):
        for key in value:
            item = value[key]
            if looks_secret(str(key)) and isinstance(item, str):
                if item != MASK:
                    value[key] = MASK
                    changed = True
            else:
                changed |= _meta(item)
    elif isinstance(value, list):
        for item in value:
            changed |= _meta(item)
    return changed


def _anywhere(value: Any) -> bool:
    changed = False
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "_meta":
                changed |= _meta(item)
            else:
                if key == "env":
                    changed |= _named_values(item, looks_secret)
                changed |= _anywhere(item)
    elif isinstance(value, list):
        for item in value:
            changed |= _anywhere(item)
    return changed
