"""Agent factories: what builds the agent of each session.

The backend asks one :class:`AgentFactory` for everything about the agent it serves: a
new agent per session (:meth:`~AgentFactory.create`), whether a model provider is usable
(``initialize`` and ``session/new`` answer "authentication required" when not), and the
models for the editor's picker. The embedded agent's factory
(:mod:`acpwire.agent.embedded.factory`) and Hermes' (:mod:`acpwire.hermes.factory`)
implement it in full.

A factory of your own need not: subclass :class:`BaseAgentFactory` and write
:meth:`~BaseAgentFactory.create_agent`, or hand the backend a plain function of a
:class:`SessionContext` (:class:`FunctionFactory` wraps it). Everything else has a default:
always configured, the models of :attr:`BaseAgentFactory.models` (none by default).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from typing import Self

    from acpwire.agent.seam import SyncAgent
    from acpwire.config import Settings

__all__ = ["AgentFactory", "BaseAgentFactory", "FunctionFactory", "SessionContext"]


@dataclass(frozen=True, slots=True)
class SessionContext:
    """What a factory knows about the session it builds an agent for."""

    session_id: str
    """The ACP session id (what the editor names the session by)."""
    cwd: str
    """The session's working directory (absolute, translated for WSL)."""
    model: str | None
    """The model the session asks for (the picker's, a restored session's), or None for
    the agent's default."""
    internal_id: str
    """The agent's own id for the conversation: what ``internal_session_id`` should
    report. Equal to the session id for a new session; a restored session passes the id its
    agent last reported (after a rotation, the rotated one)."""


class AgentFactory(Protocol):
    """What the backend asks about the agent it serves (the full protocol)."""

    @property
    def name(self) -> str:
        """What agent it builds, for humans (logs, ``--check``, ``/version``)."""
        ...

    @property
    def setup_hint(self) -> str:
        """How the user configures this agent's model (shown with "authentication required")."""
        ...

    @property
    def problem(self) -> str | None:
        """Why no provider is usable, after :meth:`configured` returned False."""
        ...

    @property
    def provider(self) -> str:
        """The model provider's name (an auth method id, ``/model``)."""
        ...

    def configured(self) -> bool:
        """Whether the agent can work at all (may block: run off the event loop; a
        factory that asks the network waits for :meth:`start_lookup`'s work, bounded)."""
        ...

    def provider_hint(self) -> str | None:
        """The provider ``initialize`` names, or None: from configuration alone, never the
        network (start-up does not wait on a model server)."""
        ...

    def start_lookup(self) -> None:
        """Begin in the background what :meth:`configured` needs from the network (called
        once the ``initialize`` answer is out; never blocks)."""
        ...

    def available_models(self) -> list[str]:
        """The models to offer in the picker (may block for the endpoint's answer)."""
        ...

    def cached_models(self) -> list[str] | None:
        """:meth:`available_models` if already known, else None (never blocks)."""
        ...

    def reset(self) -> None:
        """Forget what was resolved (after ``--setup``, ``authenticate`` or ``logout``)."""
        ...

    def planned_model(self, model: str | None) -> str | None:
        """The model a new session's agent will use, known without building it; None
        when only building the agent tells (the session then builds it at once)."""
        ...

    def create(
        self, session_id: str, cwd: str, model: str | None, internal_id: str | None = None
    ) -> SyncAgent:
        """A new agent for a session; ``internal_id``: resume that internal session id (a
        restored session). Raise :class:`acpwire.agent.config.ConfigError` when no
        provider is usable (answered "authentication required")."""
        ...


class BaseAgentFactory:
    """An :class:`AgentFactory` with defaults: subclass it and write :meth:`create_agent`.

    It is always configured and offers :attr:`models` (none: the picker shows the
    session's own model). Override a member to say more.
    """

    name: str = "custom agent"
    setup_hint: str = "See the agent's own documentation."
    problem: str | None = None
    provider: str = "custom"
    models: Sequence[str] = ()
    """The models offered in the picker; the first is a new session's default."""

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        """How ``acpwire --agent module:Class`` builds the factory (``cls()`` here)."""
        return cls()

    def create_agent(self, context: SessionContext) -> SyncAgent:
        """The agent of one session (called in a worker thread; may block)."""
        raise NotImplementedError(f"{type(self).__name__} must implement create_agent")

    def configured(self) -> bool:
        return True

    def provider_hint(self) -> str | None:
        return self.provider if self.configured() else None

    def start_lookup(self) -> None:
        return None

    def available_models(self) -> list[str]:
        return list(self.models)

    def cached_models(self) -> list[str] | None:
        return list(self.models)

    def reset(self) -> None:
        return None

    def planned_model(self, model: str | None) -> str | None:
        """None: the agent is built with the session, so ``session/new`` reports its errors."""
        return None

    def create(
        self, session_id: str, cwd: str, model: str | None, internal_id: str | None = None
    ) -> SyncAgent:
        chosen = model or (self.models[0] if self.models else None)
        context = SessionContext(session_id, cwd, chosen, internal_id or session_id)
        return self.create_agent(context)


class FunctionFactory(BaseAgentFactory):
    """A factory from a function of the :class:`SessionContext` (or an agent class)."""

    def __init__(
        self, build: Callable[[SessionContext], SyncAgent], *, name: str | None = None
    ) -> None:
        self._build = build
        self.name = name or getattr(build, "__qualname__", None) or repr(build)

    def create_agent(self, context: SessionContext) -> SyncAgent:
        return self._build(context)
