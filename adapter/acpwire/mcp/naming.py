"""Names under which MCP tools are offered to the model.

A tool ``t`` of server ``s`` becomes ``s__t``, made to fit the OpenAI function-name rule
``^[a-zA-Z0-9_-]{1,64}$``: every other character becomes ``_`` and long names are cut.
A name that was cut, or that would equal a name already taken, gets a short hash of the
original server and tool names as a suffix, so the result is stable across sessions and
restarts and never collides.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

MAX_LENGTH = 64
SEPARATOR = "__"
_INVALID = re.compile(r"[^A-Za-z0-9_-]")
_VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_HASH_LENGTH = 8


def sanitize(part: str) -> str:
    """``part`` with every character outside ``[A-Za-z0-9_-]`` replaced by ``_``."""
    return _INVALID.sub("_", part)


def is_valid(name: str) -> bool:
    return bool(_VALID.match(name))


def _digest(server: str, tool: str, attempt: int) -> str:
    # NUL cannot occur in either name's meaning, so distinct pairs hash distinct inputs.
    key = f"{server}\0{tool}\0{attempt}".encode()
    return hashlib.sha256(key).hexdigest()[:_HASH_LENGTH]


def _with_suffix(base: str, suffix: str) -> str:
    return f"{base[: MAX_LENGTH - len(suffix) - 1]}_{suffix}"


def _plain_name(server: str, tool: str) -> str:
    return f"{sanitize(server) or 'mcp'}{SEPARATOR}{sanitize(tool) or 'tool'}"


def _needs_change(server: str, tool: str) -> bool:
    return _plain_name(server, tool) != f"{server}{SEPARATOR}{tool}"


def allocate_names(server: str, tools: Sequence[str], taken: Iterable[str] = ()) -> list[str]:
    """Model-facing names for ``tools`` of ``server``, in the same order.

    ``taken`` holds names already in use (built-in tools, other servers' tools); the
    result avoids them and is free of duplicates. Names that needed no change win over
    changed ones: with tools ``a.b`` and ``a_b``, ``a_b`` keeps ``server__a_b``.
    """
    used = set(taken)
    names: list[str | None] = [None] * len(tools)
    # Untouched names first, so that sanitising never steals a name from a tool whose
    # own name was already valid, whatever order the server lists them in.
    order = sorted(range(len(tools)), key=lambda i: _needs_change(server, tools[i]))
    for index in order:
        tool = tools[index]
        plain = _plain_name(server, tool)
        name = plain if len(plain) <= MAX_LENGTH and plain not in used else None
        attempt = 0
        while name is None or name in used:
            name = _with_suffix(plain, _digest(server, tool, attempt))
            attempt += 1
        used.add(name)
        names[index] = name
    return [name for name in names if name is not None]
