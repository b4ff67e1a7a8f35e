"""File paths named by tool arguments, made absolute against the session cwd."""

from __future__ import annotations

import os
from typing import Any

_V4A_MARKERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")


def absolute(path: str, cwd: str) -> str:
    """``path`` made absolute against the session ``cwd`` (``~`` expanded, normalised)."""
    expanded = os.path.expanduser(path)
    if not os.path.isabs(expanded):
        expanded = os.path.join(cwd, expanded)
    return os.path.normpath(expanded)


def patch_paths(args: dict[str, Any]) -> list[str]:
    """The files named in a V4A patch (``*** Update File: p`` and friends), in order."""
    text = args.get("patch")
    if not isinstance(text, str):
        return []
    found: list[str] = []
    for line in text.splitlines():
        for marker in _V4A_MARKERS:
            path = line[len(marker) :].strip() if line.startswith(marker) else ""
            if path and path not in found:
                found.append(path)
    return found
