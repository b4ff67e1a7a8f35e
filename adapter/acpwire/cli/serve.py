"""``acpwire`` (bare, as editors launch it) and ``acpwire serve``: the stdio ACP backend.

Serves ACP on stdin/stdout until the editor closes stdin or a signal ends it (stdout
carries protocol frames only; anything else written there, by the agent, a tool or a
child process, lands on stderr). ``--agent SPEC`` (or ``ACPWIRE_AGENT``) picks the agent
served: ``auto`` (default), ``default``, ``hermes``, a name an installed package registers
under the ``acpwire.agents`` entry points, or ``module:callable`` (docs/LIBRARY.md); a
spec that cannot be served is one line on stderr and exit code 2. ``--no-unstable``
answers -32601 to unstable methods. ``initialize`` is answered before the event loop
starts (:mod:`acpwire.server.process.first_answer`).
"""

from __future__ import annotations

import argparse
import gc
import logging
import signal
import sys
from types import FrameType
from typing import TYPE_CHECKING

from acpwire.cli._start import backend_settings

if TYPE_CHECKING:
    from acpwire.config import Settings

__all__ = ["run", "serve"]


def run(args: argparse.Namespace) -> int:
    settings = backend_settings(args.log_level)
    if isinstance(settings, int):
        return settings
    return serve(settings, args.agent, unstable=not args.no_unstable)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def serve(settings: Settings, agent: str | None, *, unstable: bool) -> int:
    """The stdio backend until the editor closes stdin or a signal ends it."""
    # Until the backend's signal watcher is up (acpwire.server.process.signals), SIGTERM ends
    # the start as Ctrl-C does: quietly, exit code 0, no traceback.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        # Start-up builds objects that live as long as the process; the cyclic collector
        # would scan them over and over (about 5 % of the start-up). It resumes once the
        # backend is up (acpwire.server.stdio.settle_gc).
        gc.disable()
        # The first model built would import importlib.metadata to find pydantic plugins
        # (about 25 ms before `initialize` and again before `session/new`).
        from acpwire.server.process.pydantic_plugins import defer_plugin_discovery

        defer_plugin_discovery()
        from acpwire.server.process.choice import AgentSpecError, choose_factory
        from acpwire.server.process.first_answer import answer_first

        try:
            factory = choose_factory(settings, agent)
        except AgentSpecError as exc:
            print(f"acpwire: {exc}", file=sys.stderr)
            return 2
        # `initialize` is answered before the event loop and anyio load
        # (acpwire.server.process.first_answer).
        early = answer_first(factory, unstable=unstable)
        if early is not None:
            from acpwire.server.stdio import run_until_done

            run_until_done(factory, settings, unstable=unstable, early=early)
    except KeyboardInterrupt:
        logging.getLogger("acpwire").info("interrupted while starting; shutting down")
        return 0
    from acpwire.server.process.shutdown import exit_now, wait_for_helpers

    left = wait_for_helpers()
    if left:
        exit_now(0, left)
    return 0
