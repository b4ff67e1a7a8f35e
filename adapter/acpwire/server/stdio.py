"""Run the backend on the process's stdin/stdout (what an editor launches).

:func:`run_stdio` serves one agent (a factory, a function of the session context, or a
spec such as ``"mypkg.agent:factory"``) with everything the built-in backend does,
staged start-up included; :func:`serve` is the same in one blocking call, with the
config home's settings and logging set up as ``acpwire`` does.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias

import anyio

from acpwire.config import Settings
from acpwire.rpc import stdio_streams
from acpwire.server.process.choice import as_factory, choose_factory, load_factory
from acpwire.server.process.first_answer import EarlyStart, answer_first
from acpwire.server.process.front_desk import Station, serve_connection
from acpwire.server.process.signals import SignalPolicy, watch_signals

if TYPE_CHECKING:
    from acpwire.agent.factory import AgentFactory, SessionContext
    from acpwire.agent.seam import SyncAgent
    from acpwire.server.app import Runtime
    from acpwire.server.sessions.state import SessionState

__all__ = ["AgentSource", "resolve_agent", "run_stdio", "run_until_done", "serve", "settle_gc"]

AgentSource: TypeAlias = "AgentFactory | Callable[[SessionContext], SyncAgent] | str | None"
"""What the backend can serve: a factory, a function (or agent class) called with each
session's context, an agent spec (``"module:callable"``, a registered name) or None (the
``ACPWIRE_AGENT`` choice, ``auto`` by default)."""

logger = logging.getLogger(__name__)

SETTLE_AFTER_S = 5.0
"""The collector resumes at the latest this long after start-up began."""


def settle_gc() -> None:
    """End of start-up: what it built lives as long as the process, so the collector
    need not scan it again (``gc.freeze``); collection resumes if it was paused."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def _signal_policy(station: Station) -> SignalPolicy:
    """SIGINT cancels the turns running on the station's backends (see :mod:`~.process.signals`)."""

    def sessions() -> list[SessionState]:
        return [s for b in station.backends for s in b.manager.open_sessions()]

    def cancel(state: SessionState) -> None:
        for backend in station.backends:
            if backend.manager.peek(state.id) is state:
                backend.turns.cancel(state)
                return

    return SignalPolicy(sessions, cancel)


def resolve_agent(agent: AgentSource, settings: Settings) -> AgentFactory:
    """The factory of ``agent``; raises :class:`~.process.choice.AgentSpecError`."""
    if agent is None:
        return choose_factory(settings)
    if isinstance(agent, str):
        return load_factory(agent, settings)
    return as_factory(agent, settings)


async def run_stdio(
    agent: AgentSource = None, *, settings: Settings | None = None, unstable: bool = True
) -> None:
    """Serve ``agent`` to the editor on stdin/stdout until it closes stdin. ``settings``:
    the config home's (:func:`acpwire.config.load_settings`) by default. The session
    database is opened, and the collector resumes (:func:`settle_gc`), once the backend
    is built."""
    if settings is None:
        from acpwire.config import load_settings

        settings = load_settings()
    await _serve(resolve_agent(agent, settings), settings, unstable=unstable, early=None)


async def _serve(
    factory: AgentFactory, settings: Settings, *, unstable: bool, early: EarlyStart | None
) -> None:
    """:func:`run_stdio`, on stdio claimed (and perhaps greeted) before the loop started."""
    made: list[Runtime] = []

    def runtime() -> Runtime:
        """Opened with the first backend (after the ``initialize`` answer), then kept."""
        if not made:
            from acpwire.server.app import Runtime

            made.append(Runtime.create(settings, factory))
        return made[0]

    async def settle_anyway() -> None:
        # A client that never gets as far as a backend (no initialize, no session) must
        # not leave the collector paused.
        await anyio.sleep(SETTLE_AFTER_S)
        settle_gc()

    logger.info("acpwire serving ACP on stdio (config home %s)", settings.home)
    claimed = None if early is None else early.stdio
    greeted = None if early is None else early.probe
    try:
        async with (
            stdio_streams(claimed=claimed) as (receive, send),
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(settle_anyway)
            station = Station(factory, runtime, unstable=unstable, on_ready=settle_gc)
            tg.start_soon(watch_signals, _signal_policy(station), tg.cancel_scope.cancel)
            await serve_connection(station, receive, send, greeted=greeted)
            tg.cancel_scope.cancel()
    finally:
        for opened in made:
            opened.close()
        gc.enable()


def serve(
    agent: AgentSource = None, *, unstable: bool = True, log_level: str | None = None
) -> None:
    """Serve ``agent`` on stdio in one blocking call: what ``acpwire --agent`` does.

    Reads the config home (``ACPWIRE_HOME``), logs to stderr, and returns when the
    editor closes stdin. A spec that cannot be served raises
    :class:`~.process.choice.AgentSpecError` before anything is read from stdin.
    """
    from acpwire.config import load_settings
    from acpwire.config.logs import setup_logging

    settings = load_settings()
    setup_logging(log_level or settings.log_level)
    factory = resolve_agent(agent, settings)
    gc.disable()  # resumed once the backend is built (settle_gc)
    try:
        early = answer_first(factory, unstable=unstable)
        if early is not None:
            run_until_done(factory, settings, unstable=unstable, early=early)
    finally:
        gc.enable()


def run_until_done(
    factory: AgentFactory,
    settings: Settings,
    *,
    unstable: bool = True,
    early: EarlyStart | None = None,
) -> None:
    """Serve ``factory`` on stdio in a new event loop until the editor closes stdin or a
    signal ends it (:mod:`~.process.signals`); a Ctrl-C before the signal watcher is up ends it
    quietly too. ``early``: what :func:`~.process.first_answer.answer_first` did before the loop
    (None: claim stdio and answer everything in the loop)."""
    try:
        anyio.run(lambda: _serve(factory, settings, unstable=unstable, early=early))
    except KeyboardInterrupt:
        logger.info("interrupted; shutting down")
    except BaseExceptionGroup as group:  # the same, raised inside a task group
        if group.split(KeyboardInterrupt)[1] is not None:
            raise
        logger.info("interrupted; shutting down")
