"""Which agent the backend serves: ``acpwire --agent SPEC`` or ``ACPWIRE_AGENT=SPEC``.

A spec is ``module:attribute`` (``mypkg.agent:factory``), a name registered under the
:data:`ENTRY_POINT_GROUP` entry-point group by an installed package, or a built-in name:
``default`` (the embedded agent), ``hermes`` and ``auto`` (the default: Hermes when it
is installed, else the embedded agent). The built-ins are registrations like any other
(also declared in acpwire's own entry points); they are looked up without reading the
installed packages' metadata, which start-up would pay for.

What a spec names becomes an :class:`~acpwire.agent.factory.AgentFactory`
(:func:`as_factory`): a factory object is used as it is; a factory class is built with
its ``from_settings(settings)`` (or with no arguments); any other callable, an agent
class included, is called with each session's
:class:`~acpwire.agent.factory.SessionContext` to build its agent. A spec that cannot be
used raises :class:`AgentSpecError`, whose message is one line.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from acpwire.agent.factory import UNWRITTEN, AgentFactory, FunctionFactory, agent_problem
from acpwire.hermes.modules import available as hermes_available

if TYPE_CHECKING:
    from acpwire.config import Settings

__all__ = [
    "AGENT_ENV",
    "BUILTIN_AGENTS",
    "ENTRY_POINT_GROUP",
    "AgentSpecError",
    "as_factory",
    "choose_factory",
    "load_factory",
]

logger = logging.getLogger(__name__)

AGENT_ENV = "ACPWIRE_AGENT"
ENTRY_POINT_GROUP = "acpwire.agents"
BUILTIN_AGENTS: dict[str, str] = {
    "default": "acpwire.agent.embedded.factory:DefaultAgentFactory",
    "hermes": "acpwire.hermes.factory:HermesAgentFactory",
}
"""The built-in registrations (pyproject.toml declares the same entry points)."""
FACTORY_MEMBERS = (
    "name",
    "setup_hint",
    "problem",
    "provider",
    "configured",
    "provider_hint",
    "start_lookup",
    "available_models",
    "cached_models",
    "reset",
    "planned_model",
    "create",
)


class AgentSpecError(Exception):
    """An agent spec that cannot be served; the message is one line for the user."""


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _import_target(spec: str) -> object:
    module_name, _, attribute = spec.partition(":")
    module_name, attribute = module_name.strip(), attribute.strip()
    if not module_name or not attribute:
        raise AgentSpecError(f"agent {spec!r}: expected module:callable (mypkg.agent:factory)")
    try:
        target: object = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and module_name.startswith(exc.name):
            raise AgentSpecError(
                f"agent {spec!r}: no module named {exc.name!r} (it is imported as Python "
                "imports any module, never from the current folder: install its package, "
                "or put the folder holding it on PYTHONPATH)"
            ) from None
        raise AgentSpecError(
            f"agent {spec!r}: importing {module_name} failed: {_one_line(exc)}"
        ) from exc
    except Exception as exc:
        raise AgentSpecError(
            f"agent {spec!r}: importing {module_name} failed: {_one_line(exc)}"
        ) from exc
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise AgentSpecError(f"agent {spec!r}: {module_name} has no {attribute!r}") from None
    return target


def _registered(name: str) -> object:
    from importlib.metadata import entry_points  # costly to import: only for such a name

    found = entry_points(group=ENTRY_POINT_GROUP, name=name)
    for entry in found:
        try:
            return entry.load()
        except Exception as exc:
            raise AgentSpecError(
                f"agent {name!r} ({entry.value}) cannot be loaded: {_one_line(exc)}"
            ) from None
    known = ", ".join(["auto", *BUILTIN_AGENTS, *_installed_names()])
    raise AgentSpecError(
        f"unknown agent {name!r}: not module:callable and not a registered name ({known})"
    )


def _installed_names() -> list[str]:
    from importlib.metadata import entry_points

    names = {e.name for e in entry_points(group=ENTRY_POINT_GROUP)}
    return sorted(names - set(BUILTIN_AGENTS) - {"auto"})


def _has_member(target: object, name: str) -> bool:
    """Without reading it: a property (``provider``) may resolve the configuration."""
    own = getattr(target, "__dict__", {})
    return name in own or any(name in vars(cls) for cls in type(target).__mro__)


def _check_factory_class(cls: type, label: str) -> None:
    """A :class:`~acpwire.agent.factory.BaseAgentFactory` subclass must write
    ``create_agent``; what its annotation says it returns must be an agent."""
    create_agent = getattr(cls, "create_agent", None)
    if create_agent is None:
        return
    if getattr(create_agent, UNWRITTEN, False):
        import difflib

        own = sorted({name for klass in cls.__mro__ for name in vars(klass)} - {"create_agent"})
        close = difflib.get_close_matches("create_agent", own, n=1, cutoff=0.6)
        hint = f"; did you mean create_agent (it defines {close[0]})?" if close else ""
        raise AgentSpecError(
            f"agent {label!r}: {cls.__name__} does not define create_agent(self, context){hint}"
        )
    _check_returns(create_agent, f"{cls.__name__}.create_agent", label)


def _check_returns(function: object, name: str, label: str) -> None:
    """The class ``function`` is annotated to return, if any, must be an agent."""
    import typing

    try:
        returned = typing.get_type_hints(function).get("return")
    except Exception:  # an annotation that cannot be evaluated here: not checked
        return
    if isinstance(returned, type):
        # A class of its own that never wrote run_turn may be a base of the agents made
        # (not refused), unless it misspelt it (``run_trun``: refused, the name meant).
        problem = agent_problem(returned, written=False)
        misspelt = agent_problem(returned)
        if problem is None and misspelt is not None and "did you mean" in misspelt:
            problem = misspelt
        if problem is not None:
            raise AgentSpecError(
                f"agent {label!r}: {name} returns {returned.__name__}, not an agent: {problem}"
            )


def _check_agent_maker(target: object, label: str) -> None:
    """What can be told of a function or agent class without calling it: it takes the
    :class:`~acpwire.agent.factory.SessionContext`, is no coroutine function, and builds
    (a class) or is annotated to return an agent."""
    import inspect

    name = getattr(target, "__qualname__", None) or type(target).__name__
    if isinstance(target, type):
        problem = agent_problem(target)
        if problem is not None:
            raise AgentSpecError(f"agent {label!r}: {name} is not an agent: {problem}")
    elif inspect.iscoroutinefunction(target):
        raise AgentSpecError(
            f"agent {label!r}: {name} is async: a factory is a plain function of the "
            f"SessionContext (def {name}(context)), called in a worker thread"
        )
    try:
        signature = inspect.signature(cast(Any, target))
    except (TypeError, ValueError):  # a builtin without one: not checked
        return
    try:
        signature.bind(None)
    except TypeError:
        raise AgentSpecError(
            f"agent {label!r}: {name}{signature} cannot be called with the SessionContext "
            f"alone: write {name}(context)"
        ) from None
    if not isinstance(target, type):
        _check_returns(target, name, label)


def as_factory(target: object, settings: Settings | None = None, label: str = "") -> AgentFactory:
    """The factory a spec's object stands for (see the module docstring); what can be
    checked without building an agent is (the shapes above)."""
    label = label or repr(target)
    if isinstance(target, type) and callable(getattr(target, "create", None)):
        _check_factory_class(target, label)
    try:
        if isinstance(target, type) and callable(getattr(target, "create", None)):
            maker = getattr(target, "from_settings", None)
            target = maker(settings) if callable(maker) and settings is not None else target()
    except Exception as exc:
        raise AgentSpecError(
            f"agent {label!r}: building the factory failed: {_one_line(exc)}"
        ) from exc
    if callable(getattr(target, "create", None)) and not isinstance(target, type):
        missing = [name for name in FACTORY_MEMBERS if not _has_member(target, name)]
        if missing:
            raise AgentSpecError(
                f"agent {label!r}: the factory lacks {', '.join(missing)} "
                "(subclass acpwire.BaseAgentFactory for defaults)"
            )
        return cast(AgentFactory, target)
    if callable(target):
        _check_agent_maker(target, label)
        name = getattr(target, "__qualname__", None) or label
        return FunctionFactory(cast(Any, target), name=name)
    raise AgentSpecError(f"agent {label!r}: {type(target).__name__} is not callable")


def load_factory(spec: str, settings: Settings | None = None) -> AgentFactory:
    """The factory of ``spec`` (module:callable, a registered or a built-in name)."""
    spec = spec.strip()
    if not spec:
        raise AgentSpecError("agent '': expected module:callable or a registered name")
    name = spec.lower()
    if name == "auto":
        name = "hermes" if hermes_available() else "default"
    if ":" in spec:
        target = _import_target(spec)
    elif name in BUILTIN_AGENTS:
        target = _import_target(BUILTIN_AGENTS[name])
    else:
        target = _registered(spec)
    factory = as_factory(target, settings, spec)
    logger.info("serving %s (agent %s)", factory.name, spec)
    return factory


def choose_factory(
    settings: Settings, spec: str | None = None, env: Mapping[str, str] | None = None
) -> AgentFactory:
    """``spec`` (``--agent``), else ``ACPWIRE_AGENT``, else ``auto``."""
    if spec is None:
        spec = (env if env is not None else os.environ).get(AGENT_ENV, "") or "auto"
    return load_factory(spec, settings)
