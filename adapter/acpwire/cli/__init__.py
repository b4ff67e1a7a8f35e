"""The ``acpwire`` command line: one module per command, each imported only when it runs.

``acpwire`` with no command serves ACP on stdin/stdout, as editors launch it
(:mod:`~acpwire.cli.serve`); the commands (``acpwire --help`` lists them) and the flags
kept from the single-command days (``--check`` for ``self-check``, ``--setup``, ``--hermes-setup``,
``--demo``, ``--version``) are parsed by :mod:`~acpwire.cli._parser`, which imports
nothing but argparse: a bare start pays for the backend's modules only.
"""

from __future__ import annotations

import importlib

from acpwire.cli._parser import command_of, parse

__all__ = ["main"]

_MODULES = {
    "serve": "acpwire.cli.serve",
    "self-check": "acpwire.cli.selfcheck",
    "setup": "acpwire.cli.setup",
    "hermes-setup": "acpwire.cli.hermes_setup",
    "demo": "acpwire.cli.demo",
    "tap": "acpwire.cli.tap",
    "check": "acpwire.cli.check",
    "trace": "acpwire.cli.trace",
}
"""Each command's module; it has ``run(args) -> int``."""


def main(argv: list[str] | None = None) -> int:
    """Run the command ``argv`` (default: ``sys.argv[1:]``) names; its exit code."""
    args = parse(argv)
    command = command_of(args)
    if command == "version":
        from acpwire._version import __version__

        print(f"acpwire {__version__}")
        return 0
    run = importlib.import_module(_MODULES[command]).run
    code: int = run(args)
    return code
