"""``acpwire trace report FILE``: a trace the tap wrote, as a page, Markdown or JSON.

``-o OUT`` writes the report there (default: standard output); ``--format`` is ``html``
(default; a self-contained page that opens from a file), ``md`` or ``json``. Exit code 0
when the report was written, 1 when the trace reports violations or requests never
answered and ``--fail-on-violations`` was given, 2 for a usage error or a trace that
cannot be read. Stdlib only: nothing of the backend is imported.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from acpwire.cli.trace._render import render_html, render_json, render_markdown
from acpwire.cli.trace._summary import NotATapTrace, read_trace
from acpwire.config.private import write_private

__all__ = ["run"]

_RENDER = {"html": render_html, "md": render_markdown, "json": render_json}


def run(args: argparse.Namespace) -> int:
    """``acpwire trace report`` (argparse requires the action: ``report`` is the one)."""
    source = Path(args.file)
    try:
        summary = read_trace(source)
    except OSError as exc:
        print(f"acpwire trace report: cannot read {source}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except NotATapTrace:
        print(
            f"acpwire trace report: {source} is a trace of acpwire check (several agent "
            "processes, by check), not of acpwire tap: the check's own report says what "
            "failed and why (acpwire check --format md), and its lines are JSON "
            f"(jq 'select(.check == \"prompt\")' {source})",
            file=sys.stderr,
        )
        return 2
    text = _RENDER[args.format](summary)
    if args.output is None or str(args.output) == "-":
        sys.stdout.write(text)
    else:
        try:
            write_private(Path(args.output), text)  # it shows what the trace holds
        except OSError as exc:
            print(
                f"acpwire trace report: cannot write {args.output}: {exc.strerror or exc}",
                file=sys.stderr,
            )
            return 2
    if args.fail_on_violations and (summary.violations or summary.unanswered):
        return 1
    return 0
