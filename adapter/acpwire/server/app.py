"""Assemble the backend: the session database, the runtime, one connection's backend.

This module is the session machinery's entry point, imported once ``initialize`` has
been answered (see :mod:`.process.front_desk`). :func:`build_backend` builds a
connection's backend; :func:`serve` runs one ACP connection with an existing runtime
over any byte stream pair (tests use an in-memory pair) until the client closes it.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from anyio.abc import ByteReceiveStream, ByteSendStream

from acp_v1.peers import ClientPeer
from acpwire.agent.factory import AgentFactory
from acpwire.config import Settings
from acpwire.config.environment import secret_spec
from acpwire.config.private import (
    FILE_MODE,
    PRIVATE_FILES,
    create_private_file,
    make_private_home,
    restrict,
)
from acpwire.mcp import McpServerHost
from acpwire.probe import ConnectionProbe
from acpwire.sandbox import sandbox_status
from acpwire.server.editor.mcp_host import McpHost
from acpwire.server.methods.backend import AcpBackend
from acpwire.server.process.choice import choose_factory
from acpwire.server.process.front_desk import Station, serve_connection
from acpwire.server.sessions.manager import SessionManager
from acpwire.store import SessionStore, StoreError, open_session_store

logger = logging.getLogger(__name__)

HELPER_JOIN_S = 2.0
"""How long closing waits for each background check of start-up."""


def open_store(settings: Settings) -> tuple[SessionStore, str | None]:
    """The session database, or an in-memory one plus the reason when the file is unusable.

    A corrupt or locked file is left untouched for inspection; sessions then live only
    as long as the process, and the editor is told so.
    """
    try:
        make_private_home(settings.home)
        create_private_file(settings.db_path)  # SQLite gives -wal and -shm the same mode
        store = open_session_store(settings.db_path, busy_timeout_ms=settings.db_busy_timeout_ms)
        for name in PRIVATE_FILES:  # files SQLite made just now (after a move aside...)
            restrict(settings.home / name, FILE_MODE, warn=False)
        return store, None
    except (StoreError, OSError) as exc:
        problem = f"the session database {settings.db_path} cannot be used ({exc})"
        logger.error("%s; sessions will not be saved in this run", problem)
        return SessionStore(":memory:"), problem


def check_in_background(manager: SessionManager) -> threading.Thread | None:
    """Integrity-check a database too large to check at open, in a daemon thread.

    A damaged file is logged and the user is told after their next ``session/new``
    (``manager.store_warning``); the backend keeps using it, and a session whose pages
    are damaged fails to load with a clear error. Returns the thread, or None when the
    file was checked at open.
    """
    store = manager.store
    if not store.integrity_deferred:
        return None

    def check() -> None:
        problem = store.integrity_problem()
        if problem is None:
            logger.info("session database %s: integrity check passed", store.path)
            return
        logger.error("session database %s is damaged: %s", store.path, problem)
        manager.store_warning = (
            f"the session database {store.path} is damaged ({problem}); some sessions may "
            "fail to load. Move the file aside to start a fresh one."
        )

    thread = threading.Thread(target=check, name="acpwire-db-check", daemon=True)
    thread.start()
    return thread


def probe_sandbox_in_background() -> threading.Thread:
    """Try bubblewrap once, off the start-up path, and log what commands will get."""

    def probe() -> None:
        status = sandbox_status()
        (logger.info if status.available else logger.warning)("%s", status.hint)

    thread = threading.Thread(target=probe, name="acpwire-sandbox-probe", daemon=True)
    thread.start()
    return thread


@dataclass(slots=True)
class Runtime:
    """What outlives a connection: the session manager and the agent factory."""

    settings: Settings
    manager: SessionManager
    factory: AgentFactory
    helpers: tuple[threading.Thread, ...] = ()
    """Start-up's background checks; :meth:`close` lets them finish (bounded)."""

    @classmethod
    def create(cls, settings: Settings, factory: AgentFactory | None = None) -> Runtime:
        store, problem = open_store(settings)
        factory = factory or choose_factory(settings)
        # An agent with a session database of its own (Hermes) offers it as a catalog.
        catalog = getattr(factory, "session_catalog", None)
        manager = SessionManager(
            store, factory, store_problem=problem, catalog=catalog() if catalog else None
        )
        checks = (check_in_background(manager), probe_sandbox_in_background())
        return cls(settings, manager, factory, tuple(t for t in checks if t is not None))

    def backend_for(
        self, station: Station, client: ClientPeer, probe: ConnectionProbe | None
    ) -> tuple[AcpBackend, McpHost]:
        """:func:`build_backend` with this runtime (what the front desk calls)."""
        return build_backend(self, station, client, probe)

    def close(self) -> None:
        # A check still running (a sandbox probe mid fork/exec) must not meet the
        # interpreter's finalization; each had seconds already, so wait a little.
        for thread in self.helpers:
            thread.join(HELPER_JOIN_S)
        self.manager.cleanup()
        self.manager.store.close()


def build_backend(
    runtime: Runtime, station: Station, client: ClientPeer, probe: ConnectionProbe | None
) -> tuple[AcpBackend, McpHost]:
    """The backend of one connection (and its MCP host, still to be entered), acting on
    the ``initialize`` the front desk answered."""
    host: McpHost = (
        station.mcp
        if station.mcp is not None
        else McpServerHost(secrets=secret_spec(runtime.settings))
    )
    backend = AcpBackend(
        client,
        manager=runtime.manager,
        factory=runtime.factory,
        settings=runtime.settings,
        mcp=host,
        unstable=station.unstable,
    )
    backend.adopt(probe)
    return backend, host


async def serve(
    runtime: Runtime,
    receive: ByteReceiveStream,
    send: ByteSendStream,
    *,
    unstable: bool = True,
    mcp: McpHost | None = None,
) -> None:
    """Serve one ACP client with an existing runtime until it closes the stream."""
    station = Station(runtime.factory, lambda: runtime, unstable=unstable, mcp=mcp)
    await serve_connection(station, receive, send)
