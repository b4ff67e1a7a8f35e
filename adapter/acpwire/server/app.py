"""Assemble and run the backend: settings, database, agent factory, MCP host, connection.

:func:`serve` runs one ACP connection over any byte stream pair (stdio for editors, an
in-memory pair in tests) until the client closes it, then stops every session's work
and MCP servers.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from acp_v1.peers import ClientPeer
from acpwire.agents import DefaultAgentFactory
from acpwire.config import Settings
from acpwire.hermes.modules import available as hermes_available
from acpwire.link import AgentConnection
from acpwire.mcp import McpServerHost
from acpwire.store import SessionStore, StoreError, open_session_store

from .backend import AcpBackend
from .manager import SessionManager
from .mcp import McpHost
from .turns import ModelFactory

logger = logging.getLogger(__name__)


def open_store(settings: Settings) -> tuple[SessionStore, str | None]:
    """The session database, or an in-memory one plus the reason when the file is unusable.

    A corrupt or locked file is left untouched for inspection; sessions then live only
    as long as the process, and the editor is told so.
    """
    try:
        settings.home.mkdir(parents=True, exist_ok=True)
        return open_session_store(
            settings.db_path, busy_timeout_ms=settings.db_busy_timeout_ms
        ), None
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


def choose_factory(settings: Settings, env: Mapping[str, str] | None = None) -> ModelFactory:
    """``ACPWIRE_AGENT`` = ``hermes``, ``default`` or ``auto`` (Hermes when it is installed)."""
    choice = (env if env is not None else os.environ).get("ACPWIRE_AGENT", "auto").strip().lower()
    if choice not in ("auto", "hermes", "default"):
        raise ValueError(f"ACPWIRE_AGENT must be auto, hermes or default, got {choice!r}")
    if choice == "hermes" or (choice == "auto" and hermes_available()):
        from acpwire.hermes.factory import HermesAgentFactory

        logger.info("serving the Hermes agent")
        return HermesAgentFactory()
    return DefaultAgentFactory(settings.file_values)


@dataclass(slots=True)
class Runtime:
    """What outlives a connection: the session manager and the agent factory."""

    settings: Settings
    manager: SessionManager
    factory: ModelFactory

    @classmethod
    def create(cls, settings: Settings, factory: ModelFactory | None = None) -> Runtime:
        store, problem = open_store(settings)
        factory = factory or choose_factory(settings)
        manager = SessionManager(store, factory, store_problem=problem)
        check_in_background(manager)
        return cls(settings, manager, factory)

    def close(self) -> None:
        self.manager.cleanup()
        self.manager.store.close()


async def serve(
    runtime: Runtime,
    receive: ByteReceiveStream,
    send: ByteSendStream,
    *,
    unstable: bool = True,
    on_ready: Callable[[AgentConnection[AcpBackend]], None] | None = None,
    mcp: McpHost | None = None,
) -> None:
    """Serve one ACP client until it closes the stream."""
    host: McpHost = mcp if mcp is not None else McpServerHost()

    def make_backend(client: ClientPeer) -> AcpBackend:
        return AcpBackend(
            client,
            manager=runtime.manager,
            factory=runtime.factory,
            settings=runtime.settings,
            mcp=host,
            unstable=unstable,
        )

    link = AgentConnection(make_backend, receive, send, unstable=unstable)
    if on_ready is not None:
        on_ready(link)
    try:
        async with host:
            await link.serve()
    finally:
        with anyio.CancelScope(shield=True):
            for state in runtime.manager.open_sessions():
                await link.handler.turns.stop(state, reason="connection closed")
            await host.shutdown()
        logger.info("connection closed")
