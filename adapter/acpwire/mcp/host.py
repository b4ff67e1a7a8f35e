"""The per-session MCP servers of one ACP connection (implements ``McpHost``).

How the backend uses it: enter one host per client connection and hand it to the backend;
leaving the block stops every server::

    async with McpServerHost() as host:
        backend = AcpBackend(client, ..., mcp=host)
        ...serve the connection...

Inside, the host owns an anyio task group; every server gets a task in it that keeps the
SDK's transport and client session open (:mod:`acpwire.mcp.connection`). ``start``
launches the servers of a session concurrently, each bounded by ``start_timeout``, and
registers their tools on the session agent's tool registry as ``<server>__<tool>``
(:mod:`acpwire.mcp.naming`); ``stop`` unregisters them and closes the connections (the
stdio children are gone when it returns); ``shutdown`` does that for every session.
"""

from __future__ import annotations

import asyncio
import logging
import math
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Self

import anyio
import anyio.abc

from acp_v1 import models as m

from .registry import registry_of
from .session import LateStart, McpSession

if TYPE_CHECKING:  # the MCP SDK is imported when a first server starts (cold start)
    from acpwire.config.environment import SecretSpec

    from .connection import ServerConnection
    from .registry import ToolSink

logger = logging.getLogger(__name__)

EXTRA_KEY = "mcp"
"""Key of the session's :class:`SessionServers` in ``McpSession.extra``."""

NO_REGISTRY = "this agent has no tool registry, so MCP tools cannot be offered to it"


@dataclass(eq=False)
class SessionServers:
    """The MCP servers of one session and the tool names registered for them."""

    registry: ToolSink
    connections: list[ServerConnection] = field(default_factory=list)
    tool_names: list[str] = field(default_factory=list)


class McpServerHost:
    """Starts, offers and stops the MCP servers clients name in session setup."""

    def __init__(
        self,
        *,
        start_timeout: float = 20.0,
        call_timeout: float = 120.0,
        close_timeout: float = 10.0,
        secrets: SecretSpec | None = None,
    ) -> None:
        """``secrets``: what stdio servers' environment leaves out, as for shell commands
        (:func:`acpwire.config.environment.secret_spec` of the settings; None: acpwire's
        key and every variable that looks like a secret, nothing passed through)."""
        self.secrets = secrets
        self.start_timeout = start_timeout
        self.call_timeout = call_timeout
        self.close_timeout = close_timeout
        self._task_group: anyio.abc.TaskGroup | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sessions: list[SessionServers] = []
        self._shut_down = False

    @property
    def supports_http(self) -> bool:
        return True

    @property
    def supports_sse(self) -> bool:
        return True

    async def __aenter__(self) -> Self:
        if self._task_group is not None or self._shut_down:
            raise RuntimeError("an McpServerHost can be entered only once")
        self._loop = asyncio.get_running_loop()
        task_group = anyio.create_task_group()
        await task_group.__aenter__()
        self._task_group = task_group
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        task_group = self._task_group
        assert task_group is not None, "__aexit__ without __aenter__"
        try:
            with anyio.CancelScope(shield=True):
                await self.shutdown()
        finally:
            task_group.cancel_scope.cancel()
            result = await task_group.__aexit__(exc_type, exc, traceback)
        return result

    # -- McpHost ---------------------------------------------------------------------

    async def start(
        self,
        state: McpSession,
        servers: list[m.McpServer],
        *,
        wait_s: float | None = None,
        on_late: LateStart | None = None,
    ) -> list[tuple[str, str]]:
        """Connect ``servers`` and register their tools on the session agent.

        Returns ``(server name, reason)`` for each server that failed, in the given order;
        the others work and the session works without the failed ones. A server not ready
        within ``wait_s`` goes on starting in the background: its tools are registered
        when it is ready, and ``on_late`` hears of it (pending now, ready or failed later).
        """
        if not servers:
            return []
        if self._shut_down:
            return [(server.name, "the MCP host is shut down") for server in servers]
        task_group, loop = self._task_group, self._loop
        if task_group is None or loop is None:
            raise RuntimeError("McpServerHost.start() needs the host entered (async with host)")
        registry = registry_of(state.agent)
        if registry is None:
            logger.warning(
                "session %s: MCP tools cannot be offered to %s (no tool registry); not starting %s",
                state.id,
                type(state.agent).__name__,
                ", ".join(repr(server.name) for server in servers),
            )
            return [(server.name, NO_REGISTRY) for server in servers]
        from .connection import ServerConnection
        from .transports import UnsupportedServer, opener_for, transport_kind

        entry = self._entry(state, registry)
        outcomes: list[ServerConnection | str] = []
        for server in servers:
            try:
                opener = opener_for(
                    server, state.cwd, timeout=self.start_timeout, secrets=self.secrets
                )
            except UnsupportedServer as exc:
                outcomes.append(str(exc))
                continue
            connection = ServerConnection(
                server.name,
                transport_kind(server),
                opener,
                start_timeout=self.start_timeout,
                call_timeout=self.call_timeout,
            )
            entry.connections.append(connection)
            task_group.start_soon(connection.run, name=f"mcp server {server.name!r}")
            outcomes.append(connection)
        with anyio.move_on_after(math.inf if wait_s is None else wait_s):
            for outcome in outcomes:
                if isinstance(outcome, ServerConnection):
                    await outcome.ready.wait()
        failures: list[tuple[str, str]] = []
        for server, outcome in zip(servers, outcomes, strict=True):
            if isinstance(outcome, ServerConnection):
                if not outcome.ready.is_set():
                    logger.info(
                        "session %s: MCP server %r is still starting after %g s; "
                        "its tools join when it is ready",
                        state.id,
                        server.name,
                        wait_s,
                    )
                    task_group.start_soon(self._finish_late, state, entry, outcome, loop, on_late)
                    if on_late is not None:
                        task_group.start_soon(on_late, server.name, "pending", "")
                    continue
                reason = self._settle(entry, outcome, loop)
                if reason is None:
                    continue
            else:
                reason = outcome
            logger.warning(
                "session %s: MCP server %r failed to start: %s", state.id, server.name, reason
            )
            failures.append((server.name, reason))
        return failures

    async def stop(self, state: McpSession) -> None:
        """Unregister the session's MCP tools and close its servers."""
        entry = state.extra.pop(EXTRA_KEY, None)
        if not isinstance(entry, SessionServers):
            return
        if entry in self._sessions:
            self._sessions.remove(entry)
        await self._stop_entry(entry)

    async def shutdown(self) -> None:
        """Stop the servers of every session; later ``start`` calls report failures."""
        self._shut_down = True
        entries, self._sessions = self._sessions, []
        async with anyio.create_task_group() as group:
            for entry in entries:
                group.start_soon(self._stop_entry, entry)

    # -- internals -------------------------------------------------------------------

    def _entry(self, state: McpSession, registry: ToolSink) -> SessionServers:
        entry = state.extra.get(EXTRA_KEY)
        if isinstance(entry, SessionServers) and entry.registry is registry:
            return entry
        entry = SessionServers(registry)
        state.extra[EXTRA_KEY] = entry
        self._sessions.append(entry)
        return entry

    def _settle(
        self, entry: SessionServers, connection: ServerConnection, loop: asyncio.AbstractEventLoop
    ) -> str | None:
        """A connection that finished starting: register its tools, or say why not."""
        if connection not in entry.connections:  # stop() came first
            return connection.error or "stopped before it was ready"
        if connection.error is None:
            self._register(entry, connection, loop)
            return None
        # Its task has ended: the transport is closed, the child gone.
        entry.connections.remove(connection)
        return connection.error

    async def _finish_late(
        self,
        state: McpSession,
        entry: SessionServers,
        connection: ServerConnection,
        loop: asyncio.AbstractEventLoop,
        on_late: LateStart | None,
    ) -> None:
        await connection.ready.wait()
        if entry not in self._sessions:  # the session was stopped meanwhile
            return
        reason = self._settle(entry, connection, loop)
        if reason is not None:
            logger.warning(
                "session %s: MCP server %r failed to start: %s", state.id, connection.name, reason
            )
        if on_late is not None:
            tools = len(connection.tools)
            ready = f"{tools} tool{'s' if tools != 1 else ''}"
            await on_late(connection.name, "ready" if reason is None else "failed", reason or ready)

    def _register(
        self, entry: SessionServers, connection: ServerConnection, loop: asyncio.AbstractEventLoop
    ) -> None:
        from .tools import offer_tools

        entry.tool_names += offer_tools(connection, entry.registry, loop, self.call_timeout)
        logger.info(
            "MCP server %r (%s) connected with %d tool(s)",
            connection.name,
            connection.kind,
            len(connection.tools),
        )

    async def _stop_entry(self, entry: SessionServers) -> None:
        for name in entry.tool_names:
            entry.registry.remove(name)
        entry.tool_names.clear()
        connections, entry.connections = entry.connections, []
        await self._close(connections)

    async def _close(self, connections: list[ServerConnection]) -> None:
        async with anyio.create_task_group() as group:
            for connection in connections:
                group.start_soon(connection.close, self.close_timeout)
