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

__all__ = [
    "AGENT_MEMBERS",
    "AgentFactory",
    "BaseAgentFactory",
    "FunctionFactory",
    "SessionContext",
    "agent_problem",
    "check_agent",
]

AGENT_MEMBERS: tuple[str, ...] = (
    "run_turn",
    "interrupt",
    "internal_session_id",
    "model",
    "steer",
    "compress",
    "context_usage",
    "compression_threshold",
    "reset",
    "tool_descriptions",
    "set_model",
    "set_reasoning_effort",
    "close",
)
"""What the backend uses of an agent (:class:`~acpwire.agent.seam.SyncAgent`); a
:class:`~acpwire.agent.base.BaseAgent` has all but ``run_turn`` already."""


UNWRITTEN = "__acpwire_unwritten__"
"""Set on :meth:`BaseAgent.run_turn <acpwire.agent.base.BaseAgent.run_turn>`, the one a
subclass must replace."""


def _defines(cls: type, name: str) -> bool:
    return any(name in vars(klass) for klass in cls.__mro__ if klass is not object)


def agent_problem(cls: type, *, written: bool = True) -> str | None:
    """What keeps instances of ``cls`` from being an agent, as a phrase ("it lacks ..."),
    or None: the members it lacks (a near miss named: ``run_trun``, did you mean
    ``run_turn``?), an ``async`` ``run_turn``, or (``written``) a
    :class:`~acpwire.agent.base.BaseAgent` subclass without a ``run_turn`` of its own."""
    import inspect

    missing = [name for name in AGENT_MEMBERS if not _defines(cls, name)]
    run_turn = getattr(cls, "run_turn", None)
    # BaseAgent's own run_turn is marked: a subclass that never wrote one still has it.
    unwritten = written and getattr(run_turn, UNWRITTEN, False)
    if not missing and not unwritten:
        if run_turn is not None and inspect.iscoroutinefunction(inspect.unwrap(run_turn)):
            return "its run_turn is async: write def run_turn (it runs in a worker thread)"
        return None
    import difflib

    if "run_turn" in missing or unwritten:
        own = {name for klass in cls.__mro__ if klass is not object for name in vars(klass)}
        close = difflib.get_close_matches("run_turn", sorted(own - set(AGENT_MEMBERS)), 1, 0.6)
        if close:
            return f"it defines {close[0]}, not run_turn: did you mean run_turn?"
    if unwritten:
        return "it does not define run_turn (the one method a BaseAgent subclass must write)"
    more = f" and {len(missing) - 1} more members of acpwire.SyncAgent" if len(missing) > 1 else ""
    return f"it lacks {missing[0]}{more} (subclass acpwire.BaseAgent and write run_turn)"


def check_agent(agent: object, made_by: str) -> None:
    """Raise :class:`TypeError` when ``agent``, what ``made_by`` returned, is no agent."""
    if agent is None:
        problem = f"{made_by} returned None, expected an agent: return YourAgent(context)"
    elif isinstance(agent, type):
        problem = (
            f"{made_by} returned the class {agent.__name__}, expected an agent: "
            f"return {agent.__name__}(context)"
        )
    else:
        reason = agent_problem(type(agent))
        if reason is None:
            return
        problem = f"{made_by} returned {type(agent).__name__}, not an agent: {reason}"
    error = TypeError(problem)
    # acpwire.rpc.errors.MISTAKE_MARK (this package imports no protocol layer): the
    # message says it all, the backend's traceback that found it would not help.
    vars(error)["__acpwire_mistake__"] = True
    raise error


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

    setattr(create_agent, UNWRITTEN, True)  # acpwire --agent refuses a factory without one

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
        agent = self.create_agent(context)
        check_agent(agent, self._made_by())
        return agent

    def _made_by(self) -> str:
        return f"{type(self).__name__}.create_agent"


class FunctionFactory(BaseAgentFactory):
    """A factory from a function of the :class:`SessionContext` (or an agent class)."""

    def __init__(
        self, build: Callable[[SessionContext], SyncAgent], *, name: str | None = None
    ) -> None:
        self._build = build
        self.name = name or getattr(build, "__qualname__", None) or repr(build)

    def create_agent(self, context: SessionContext) -> SyncAgent:
        return self._build(context)

    def _made_by(self) -> str:
        return f"the agent factory {self.name}()"
