"""The ``acpwire`` command: the stdio ACP backend an editor launches, plus its helpers.

``acpwire`` serves ACP on stdin/stdout (stdout carries protocol frames only; anything
else written there, by the agent, a tool or a child process, lands on stderr).
``--version``, ``--check`` (one-line self-test, exit code), ``--setup`` (interactive
provider and model configuration; also offered to editors as a terminal auth method).
"""

from __future__ import annotations

import argparse
import gc
import logging
import sys

from acpwire import __version__

LOG_FORMAT = "%(asctime)s [%(levelname)s] %(name)s: %(message)s"


def setup_logging(level: str) -> None:
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(LOG_FORMAT, "%Y-%m-%d %H:%M:%S"))
    root.addHandler(handler)
    root.setLevel(getattr(logging, level.upper(), logging.INFO))
    for noisy in ("httpx", "httpcore", "mcp"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="acpwire", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument(
        "--check", action="store_true", help="self-test imports and configuration, then exit"
    )
    parser.add_argument(
        "--setup", action="store_true", help="configure the model provider interactively"
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


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    if args.version:
        print(f"acpwire {__version__}")
        return 0
    from acpwire.config import ConfigError, load_settings

    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"acpwire: configuration error: {exc}", file=sys.stderr)
        return 2
    setup_logging(args.log_level or settings.log_level)
    if args.check:
        from acpwire.selfcheck import run_check

        ok, line = run_check(settings)
        print(line)
        return 0 if ok else 1
    if args.setup:
        from acpwire.setup import run_setup

        return run_setup(settings, assume_yes=args.yes)
    if args.demo:
        from acpwire.demo import run_demo

        return run_demo()
    # Start-up builds objects that live as long as the process; the cyclic collector
    # would scan them over and over (about 5 % of the start-up). It resumes once the
    # backend is up (acpwire.server.stdio.settle_gc).
    gc.disable()
    import anyio

    from acpwire.server.stdio import run_stdio

    try:
        anyio.run(run_stdio, settings, not args.no_unstable)
    except KeyboardInterrupt:
        logging.getLogger("acpwire").info("interrupted; shutting down")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
