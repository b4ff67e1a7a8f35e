"""What the MCP host needs of a backend session, and how it reports a late server.

The host works on any object with a session's id, working directory, agent and a dict
for its own per-session data (the backend's ``SessionState`` is one), so this package
never imports the backend.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Literal, Protocol, TypeAlias

__all__ = ["LateStart", "McpSession"]

LateStart: TypeAlias = Callable[
    [str, Literal["pending", "ready", "failed"], str], Coroutine[Any, Any, None]
]
"""Told about a server that was not ready within ``wait_s``: ``(name, "pending", "")`` at
once, then ``(name, "ready", what it offers)`` or ``(name, "failed", reason)``. Called in
a task of its own, never inside the host's ``start``."""


class McpSession(Protocol):
    """A session as the MCP host sees it."""

    @property
    def id(self) -> str: ...
    @property
    def cwd(self) -> str:
        """Where stdio servers start."""
        ...

    @property
    def agent(self) -> object:
        """The session's agent (its tool registry receives the servers' tools)."""
        ...

    @property
    def extra(self) -> dict[str, Any]:
        """Per-session data the host keeps (its servers, under ``"mcp"``)."""
        ...
