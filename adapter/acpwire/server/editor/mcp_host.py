"""The seam between the backend and per-session MCP servers (see :mod:`acpwire.mcp`)."""

from __future__ import annotations

from types import TracebackType
from typing import Protocol, Self

from acp_v1 import models as m
from acpwire.mcp.session import LateStart
from acpwire.server.sessions.state import SessionState

__all__ = ["LateStart", "McpHost"]


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
