"""What a session's turns use of their connection's backend, as a protocol.

The turns and the editor's services below the ACP methods reach the backend they serve
through this contract, never through :class:`~acpwire.server.methods.backend.AcpBackend`
itself (which sits above them and implements it): the client peer and the notifier that
sends its updates, the capability probe, the session manager, the agent factory and the
settings, the worker threads of turns, blocking work and a session's provenance.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    import anyio

    from acp_v1.peers import ClientPeer
    from acpwire.agent.factory import AgentFactory
    from acpwire.config import Settings
    from acpwire.probe import ConnectionProbe
    from acpwire.server.sessions.manager import SessionManager
    from acpwire.server.sessions.state import SessionState

    from .notifier import Notifier

__all__ = ["Backend", "SessionInfo"]

T = TypeVar("T")


class SessionInfo(Protocol):
    """The part of the turn machinery the services call: a session's title and provenance
    (:meth:`~acpwire.server.turns.reports.TurnReports.send_info`)."""

    async def send_info(self, state: SessionState, meta: dict[str, Any] | None = None) -> None: ...


class Backend(Protocol):
    """One client connection's backend, as its sessions' turns see it."""

    @property
    def client(self) -> ClientPeer: ...

    @property
    def probe(self) -> ConnectionProbe | None: ...

    @property
    def notifier(self) -> Notifier: ...

    @property
    def manager(self) -> SessionManager: ...

    @property
    def factory(self) -> AgentFactory: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def limiter(self) -> anyio.CapacityLimiter: ...

    @property
    def turns(self) -> SessionInfo: ...

    async def blocking(self, fn: Callable[..., T], *args: Any) -> T:
        """Run blocking work (database, agent construction) in a worker thread."""
        ...

    def provenance(self, state: SessionState) -> dict[str, Any] | None:
        """``_meta`` with the session's provenance (None before the agent has an id)."""
        ...
