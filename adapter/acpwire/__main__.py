"""The ``acpwire`` command: the stdio ACP backend an editor launches, plus its helpers.

``acpwire`` serves ACP on stdin/stdout (stdout carries protocol frames only; anything
else written there, by the agent, a tool or a child process, lands on stderr).
``--agent SPEC`` (or ``ACPWIRE_AGENT``) picks the agent served: ``auto`` (default),
``default``, ``hermes``, a name an installed package registers under the
``acpwire.agents`` entry points, or ``module:callable`` (docs/LIBRARY.md); a spec that
cannot be served is one line on stderr and exit code 2. ``--version``, ``--check``
(one-line self-test, exit code), ``--setup`` (interactive provider and model
configuration; also offered to editors as a terminal auth method), ``--hermes-setup``
(Hermes' own ``hermes model``: the terminal auth method when serving Hermes).
"""

from __future__ import annotations

import argparse
import gc
import logging
import signal
import sys
from types import FrameType
from typing import TYPE_CHECKING

from acpwire import __version__
from acpwire._logs import setup_logging

if TYPE_CHECKING:
    from acpwire.config import Settings


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="acpwire", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument(
        "--agent",
        metavar="SPEC",
        default=None,
        help="the agent to serve: auto, default, hermes, a registered name or module:callable"
        " (env ACPWIRE_AGENT)",
    )
    parser.add_argument(
        "--check", action="store_true", help="self-test imports and configuration, then exit"
    )
    parser.add_argument(
        "--setup", action="store_true", help="configure the model provider interactively"
    )
    parser.add_argument(
        "--hermes-setup",
        action="store_true",
        help="run Hermes' own provider and model set-up (`hermes model`), then exit",
    )
    parser.add_argument(
        "--yes", "-y", action="store_true", help="with --setup: accept the proposed values"
    )
    parser.add_argument(
        "--log-level", default=None, help="DEBUG, INFO, WARNING or ERROR (env ACPWIRE_LOG_LEVEL)"
    )
    parser.add_argument(
        "--no-unstable",
        action="store_true",
        help="answer -32601 to unstable methods (session/fork)",
    )
    parser.add_argument(
        "--demo", action="store_true", help="run a whole conversation offline and print it"
    )
    return parser.parse_args(argv)


BACKEND_MODULES = {"httpx": "httpx", "mcp": "mcp", "dotenv": "python-dotenv"}
"""The backend's own dependencies (the ``backend`` extra): module -> distribution."""


def missing_backend() -> list[str]:
    """The distributions of the ``backend`` extra that are not installed (found, not
    imported: they load on first use)."""
    import importlib.util

    return [
        dist for module, dist in BACKEND_MODULES.items() if not importlib.util.find_spec(module)
    ]


def hermes_setup() -> int:
    """``hermes model``, Hermes' interactive set-up (the terminal auth method acpwire
    offers when serving Hermes), run as hermes-acp's ``--setup`` runs it."""
    import importlib

    try:
        hermes_main = importlib.import_module("hermes_cli.main").main
    except ImportError as exc:
        print(f"acpwire: hermes-agent is not importable here ({exc})", file=sys.stderr)
        return 2
    saved = sys.argv[:]
    sys.argv = ["hermes", "model"]
    try:
        hermes_main()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.argv = saved
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    if args.version:
        print(f"acpwire {__version__}")
        return 0
    if args.hermes_setup:
        return hermes_setup()
    missing = missing_backend()
    if missing:
        print(
            f"acpwire: the backend needs {', '.join(missing)}, which this install lacks:"
            " pip install 'acpwire[backend]'",
            file=sys.stderr,
        )
        return 2
    from acpwire.config import ConfigError, load_settings

    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"acpwire: configuration error: {exc}", file=sys.stderr)
        return 2
    setup_logging(args.log_level or settings.log_level)
    if args.check:
        from acpwire.selfcheck import run_check

        ok, line = run_check(settings, args.agent)
        print(line)
        return 0 if ok else 1
    if args.setup:
        from acpwire.setup import run_setup

        return run_setup(settings, assume_yes=args.yes)
    if args.demo:
        from acpwire.demo import run_demo

        return run_demo()
    return _serve(settings, args.agent, unstable=not args.no_unstable)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _serve(settings: Settings, agent: str | None, *, unstable: bool) -> int:
    """The stdio backend until the editor closes stdin or a signal ends it."""
    # Until the backend's signal watcher is up (acpwire.server.signals), SIGTERM ends
    # the start as Ctrl-C does: quietly, exit code 0, no traceback.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        # Start-up builds objects that live as long as the process; the cyclic collector
        # would scan them over and over (about 5 % of the start-up). It resumes once the
        # backend is up (acpwire.server.stdio.settle_gc).
        gc.disable()
        # The first model built would import importlib.metadata to find pydantic plugins
        # (about 25 ms before `initialize` and again before `session/new`).
        from acpwire._pydantic_plugins import defer_plugin_discovery

        defer_plugin_discovery()
        from acpwire.server._early import answer_first
        from acpwire.server.choice import AgentSpecError, choose_factory

        try:
            factory = choose_factory(settings, agent)
        except AgentSpecError as exc:
            print(f"acpwire: {exc}", file=sys.stderr)
            return 2
        # `initialize` is answered before the event loop and anyio load (acpwire.server._early).
        early = answer_first(factory, unstable=unstable)
        if early is not None:
            from acpwire.server.stdio import run_until_done

            run_until_done(factory, settings, unstable=unstable, early=early)
    except KeyboardInterrupt:
        logging.getLogger("acpwire").info("interrupted while starting; shutting down")
        return 0
    from acpwire.server._helpers import exit_now, wait_for_helpers

    left = wait_for_helpers()
    if left:
        exit_now(0, left)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
