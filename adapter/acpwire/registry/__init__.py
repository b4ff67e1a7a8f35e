"""The ACP registry manifest (``agent.json``): how an editor's registry launches acpwire."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

__all__ = ["manifest"]


def manifest() -> dict[str, Any]:
    """The manifest, as JSON data."""
    data: dict[str, Any] = json.loads(
        files(__package__).joinpath("agent.json").read_text(encoding="utf-8")
    )
    return data
