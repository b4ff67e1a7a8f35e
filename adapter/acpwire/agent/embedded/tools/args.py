"""Typed access to a tool call's JSON arguments, with clear errors for the model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class ToolArgError(ValueError):
    """A tool argument is missing, of the wrong type or out of range."""


def req_str(args: Mapping[str, Any], name: str, *, allow_empty: bool = False) -> str:
    value = args.get(name)
    if not isinstance(value, str):
        raise ToolArgError(f"argument {name!r} must be a string")
    if not allow_empty and not value:
        raise ToolArgError(f"argument {name!r} must not be empty")
    return value


def opt_str(args: Mapping[str, Any], name: str, default: str | None = None) -> str | None:
    value = args.get(name)
    if value is None:
        return default
    if not isinstance(value, str):
        raise ToolArgError(f"argument {name!r} must be a string")
    return value


def opt_int(
    args: Mapping[str, Any],
    name: str,
    default: int,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    value = args.get(name)
    if value is None:
        return default
    # Models often send numbers as strings ("10"); accept those, but not booleans.
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolArgError(f"argument {name!r} must be an integer")
    if minimum is not None and value < minimum:
        raise ToolArgError(f"argument {name!r} must be at least {minimum}")
    if maximum is not None and value > maximum:
        raise ToolArgError(f"argument {name!r} must be at most {maximum}")
    return value


def opt_bool(args: Mapping[str, Any], name: str, default: bool) -> bool:
    value = args.get(name)
    if value is None:
        return default
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if not isinstance(value, bool):
        raise ToolArgError(f"argument {name!r} must be true or false")
    return value
