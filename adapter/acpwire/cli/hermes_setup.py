"""``acpwire hermes-setup`` / ``--hermes-setup``: Hermes' own interactive set-up
(``hermes model``), the terminal auth method acpwire offers when serving Hermes."""

from __future__ import annotations

import argparse
import sys

__all__ = ["hermes_setup", "run"]


def run(args: argparse.Namespace) -> int:
    return hermes_setup()


def hermes_setup() -> int:
    """``hermes model``, run as hermes-acp's ``--setup`` runs it; its exit code (2 when
    hermes-agent is not importable)."""
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
