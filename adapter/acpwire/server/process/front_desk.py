"""A connection's staged start: ``initialize`` is answered before the session machinery loads.

Answering ``initialize`` needs the client's capabilities, our own (fixed facts) and
the provider the configuration names (never the network: a model look-up the agent
factory needs begins once the answer is out): the connection models and the probe. The rest
of the backend (session database, turn runner, commands, rendering, MCP host) is about
a fifth of an ACP process's start-up and is first needed by ``session/new``. So a
connection starts with a :class:`FrontDesk` as its handler; once the ``initialize``
answer has been written (or at the first other method, should a client skip
``initialize``) the backend is built and takes over, and methods arriving meanwhile wait
for it. Nothing is answered before it can be answered in full.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, TaskStatus

from acp_v1 import models as m
from acp_v1.interfaces import Agent
from acp_v1.peers import ClientPeer
from acpwire.agent.factory import AgentFactory
from acpwire.link.connections import AgentConnection
from acpwire.link.endpoint import after_answer
from acpwire.probe import ConnectionProbe
from acpwire.server.methods import lifecycle
from acpwire.server.methods.advertised import DEFAULT_MCP_TRANSPORTS

if TYPE_CHECKING:
    from acpwire.server.editor.mcp_host import McpHost
    from acpwire.server.methods.backend import AcpBackend
    from acpwire.server.sessions.state import SessionState

logger = logging.getLogger(__name__)


class Assembly(Protocol):
    """What outlives a connection and builds its backend: the
    :class:`~acpwire.server.app.Runtime`, which the front desk only ever meets through
    :attr:`Station.runtime`, once ``initialize`` is answered."""

    def backend_for(
        self, station: Station, client: ClientPeer, probe: ConnectionProbe | None
    ) -> tuple[AcpBackend, McpHost]:
        """The backend of one connection and its MCP host, still to be entered."""
        ...


@dataclass(slots=True)
class Station:
    """What one connection is served with: the runtime (made on first use) and options."""

    factory: AgentFactory
    runtime: Callable[[], Assembly]
    """The process's runtime; called when the backend is built (it opens the database:
    the session machinery loads here)."""
    unstable: bool = True
    mcp: McpHost | None = None
    """The MCP host; None builds an ``acpwire.mcp.McpServerHost`` with the backend."""
    on_ready: Callable[[], None] | None = None
    """Called once the first backend is built (the end of the process's start-up)."""
    backends: list[AcpBackend] = field(default_factory=list)
    """The backends built so far (one per connection), e.g. for a signal to cancel turns."""

    def mcp_transports(self) -> tuple[bool, bool]:
        if self.mcp is not None:
            return self.mcp.supports_http, self.mcp.supports_sse
        return DEFAULT_MCP_TRANSPORTS["http"], DEFAULT_MCP_TRANSPORTS["sse"]


class FrontDesk(Agent):
    """The agent handler until the backend is up: it implements ``initialize`` only."""

    def __init__(self, client: ClientPeer, station: Station) -> None:
        self.client = client
        self.station = station
        self.probe: ConnectionProbe | None = None
        self.backend: AcpBackend | None = None
        self.ready: Callable[[], Awaitable[None]] | None = None
        """Set by :func:`serve_connection`: builds the backend once the answer is out."""

    async def initialize(self, params: m.InitializeRequest) -> m.InitializeResponse:
        http, sse = self.station.mcp_transports()
        self.probe, response = await lifecycle.answer_initialize(
            params, self.station.factory, unstable=self.station.unstable, mcp_http=http, mcp_sse=sse
        )
        if self.backend is not None:  # a request sent behind initialize built it already
            self.backend.adopt(self.probe)
        elif self.ready is not None:
            after_answer(self.ready)
        return response


async def serve_connection(
    station: Station,
    receive: ByteReceiveStream,
    send: ByteSendStream,
    *,
    greeted: ConnectionProbe | None = None,
) -> None:
    """Serve one ACP client until it closes the stream, then stop its sessions' work.

    ``greeted``: the client's ``initialize`` was answered before the connection started
    (:mod:`~.first_answer`), with this probe, and the factory's look-up has begun; the backend
    then loads at once.
    """
    link = AgentConnection(
        lambda client: FrontDesk(client, station), receive, send, unstable=station.unstable
    )
    desk = link.handler
    built: list[tuple[AcpBackend, McpHost]] = []  # at most one: the endpoint upgrades once
    closed = anyio.Event()
    try:
        async with anyio.create_task_group() as tg:

            async def hold(host: McpHost, *, task_status: TaskStatus[None]) -> None:
                # Entered and left in a task of this connection's task group.
                async with host:
                    task_status.started()
                    await closed.wait()

            async def open_backend() -> AcpBackend:
                backend, host = station.runtime().backend_for(station, desk.client, desk.probe)
                await tg.start(hold, host)
                built.append((backend, host))
                station.backends.append(backend)
                if desk.probe is not None:  # an initialize may have finished meanwhile
                    backend.adopt(desk.probe)
                desk.backend = backend
                if station.on_ready is not None:
                    station.on_ready()
                return backend

            async def after_initialize() -> None:
                await link.connection.drained()  # the answer goes out first
                station.factory.start_lookup()  # models, in a thread of its own
                await link.endpoint.upgrade()

            async def after_greeting() -> None:  # initialize was answered before the loop
                await link.endpoint.upgrade()

            async def wind_down() -> None:
                # End of input: the client can answer nothing now (its pending requests
                # have failed). Cancel every turn and let each save its history while
                # the prompt requests still run.
                async with anyio.create_task_group() as stops:
                    for backend, _ in built:
                        for state in backend.manager.open_sessions():
                            stops.start_soon(_stop_turn, backend, state)

            link.endpoint.upgrade_with(open_backend)
            link.connection.on_input_end = wind_down
            desk.ready = after_initialize
            if greeted is not None:
                desk.probe = greeted
                tg.start_soon(after_greeting)
            try:
                await link.serve()
            finally:
                closed.set()
    finally:
        with anyio.CancelScope(shield=True):
            for backend, host in built:
                for state in backend.manager.open_sessions():
                    await backend.turns.stop(state, reason="connection closed")
                await host.shutdown()
                station.backends.remove(backend)
        logger.info("connection closed")


async def _stop_turn(backend: AcpBackend, state: SessionState) -> None:
    await backend.turns.stop(state, reason="end of input")
