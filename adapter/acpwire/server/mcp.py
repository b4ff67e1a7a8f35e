"""The seam between the backend and per-session MCP servers (see :mod:`acpwire.mcp`)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any, Literal, Protocol, Self, TypeAlias

from acp_v1 import models as m

from .state import SessionState

LateStart: TypeAlias = Callable[
    [str, Literal["pending", "ready", "failed"], str], Coroutine[Any, Any, None]
]
"""Told about a server that was not ready within ``wait_s``: ``(name, "pending", "")`` at
once, then ``(name, "ready", what it offers)`` or ``(name, "failed", reason)``. Called in
a task of its own, never inside :meth:`McpHost.start`."""


class McpHost(Protocol):
    """Starts and stops the MCP servers a client asks for in session setup.

    The implementation is :class:`acpwire.mcp.McpServerHost`, an async context manager
    entered once per client connection (``async with McpServerHost() as host``) whose
    exit stops every server."""

    @property
    def supports_http(self) -> bool: ...
    @property
    def supports_sse(self) -> bool: ...

    async def start(
        self,
        state: SessionState,
        servers: list[m.McpServer],
        *,
        wait_s: float | None = None,
        on_late: LateStart | None = None,
    ) -> list[tuple[str, str]]:
        """Connect the servers and offer their tools to the session's agent.

        Returns ``(server name, reason)`` for each server that failed; the session works
        without them. With ``wait_s``, servers not ready by then go on starting in the
        background (``on_late`` hears how that ends) and their tools join when ready."""
        ...

    async def stop(self, state: SessionState) -> None:
        """Stop the session's servers (close, delete, reload, shutdown)."""
        ...

    async def shutdown(self) -> None: ...

    async def __aenter__(self) -> Self:
        """Enter once per connection; leaving stops every server."""
        ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None: ...
