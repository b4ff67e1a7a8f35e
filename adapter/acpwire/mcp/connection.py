"""One live MCP server connection, held open by a task of the host's task group.

The SDK's transports and :class:`mcp.client.session.ClientSession` are async context
managers with task groups inside, so they must be entered and left by one task. That
task is :meth:`ServerConnection.run`: it opens the transport, initialises the session,
lists the tools, reports :attr:`ready` and then waits until :meth:`close` asks it to
leave the contexts (which ends the stdio child process or the HTTP session). Failures
never escape the task: they end up in :attr:`error`.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession

from acpwire._version import __version__

from .results import describe_error
from .transports import Opener

logger = logging.getLogger(__name__)

CLIENT_INFO = types.Implementation(name="acpwire", version=__version__)
MAX_TOOL_PAGES = 100


class NotConnected(RuntimeError):
    """The server is not (or no longer) connected."""


async def list_all_tools(session: ClientSession) -> list[types.Tool]:
    """Every tool of the server, following ``tools/list`` pagination."""
    capabilities = session.server_capabilities
    if capabilities is not None and capabilities.tools is None:
        return []
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools
    raise RuntimeError(f"tools/list was still paginating after {MAX_TOOL_PAGES} pages")


class ServerConnection:
    """A named MCP server: start with ``run`` in a task group, end with ``close``."""

    def __init__(
        self, name: str, kind: str, opener: Opener, *, start_timeout: float, call_timeout: float
    ) -> None:
        self.name = name
        self.kind = kind
        self._opener = opener
        self._start_timeout = start_timeout
        self._call_timeout = call_timeout
        self.ready = anyio.Event()
        """Set once the server is connected with its tools listed, or has failed."""
        self.closed = anyio.Event()
        """Set when the task has left every context (child process gone)."""
        self.session: ClientSession | None = None
        self.tools: list[types.Tool] = []
        self.error: str | None = None
        self._leave = anyio.Event()
        self._scope: anyio.CancelScope | None = None

    def __repr__(self) -> str:
        return f"<ServerConnection {self.name!r} ({self.kind})>"

    async def run(self) -> None:
        """Hold the connection open until :meth:`close`; never raises an ``Exception``."""
        try:
            if self._leave.is_set():
                self.error = "stopped before it started"
                return
            await self._serve()
        except Exception as exc:
            self.error = self._failure(describe_error(exc))
        finally:
            self.session = None
            if self.ready.is_set() and self.error is not None:
                logger.warning("MCP server %r stopped: %s", self.name, self.error)
            if not self.ready.is_set() and self.error is None:
                self.error = self._failure("stopped before it was ready")
            self.ready.set()
            self.closed.set()

    def _failure(self, reason: str) -> str:
        # A passed start deadline cancels the scope; the exception it causes inside the
        # SDK (a cancellation or a closed stream) says less than the timeout itself.
        scope = self._scope
        if scope is not None and scope.cancel_called and not self._leave.is_set():
            return f"did not start within {self._start_timeout:g} s"
        if not self.ready.is_set() and "Connection closed" in reason:
            return f"{reason} (the server exited or closed its output before answering)"
        return reason

    async def _serve(self) -> None:
        with anyio.CancelScope(deadline=anyio.current_time() + self._start_timeout) as scope:
            self._scope = scope
            async with (
                self._opener() as (read_stream, write_stream),
                ClientSession(read_stream, write_stream, client_info=CLIENT_INFO) as session,
            ):
                await session.initialize()
                self.tools = await list_all_tools(session)
                # Started: from now on only close() ends the connection.
                scope.deadline = math.inf
                self.session = session
                self.ready.set()
                await self._leave.wait()
        if not self.ready.is_set():
            self.error = self._failure("stopped before it was ready")

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """Call one of the server's tools (on the event loop), bounded by the call timeout."""
        session = self.session
        if session is None:
            detail = f": {self.error}" if self.error else ""
            raise NotConnected(f"MCP server {self.name!r} is not connected{detail}")
        with anyio.fail_after(self._call_timeout):
            return await session.call_tool(name, arguments)

    async def close(self, timeout: float) -> None:
        """Leave the contexts (ending the child process); cancel after ``timeout`` seconds."""
        self._leave.set()
        if not self.ready.is_set() and self._scope is not None:
            self._scope.cancel()
        with anyio.move_on_after(timeout):
            await self.closed.wait()
        if not self.closed.is_set():
            logger.warning(
                "MCP server %r did not close within %g s; cancelling it", self.name, timeout
            )
            if self._scope is not None:
                self._scope.cancel()
            await self.closed.wait()
