"""The argument parser of the ``acpwire`` command: its commands, their options, and the
flags kept from before commands existed. Stdlib only (argparse), so that parsing a bare
``acpwire`` imports nothing the backend does not need anyway.

A usage error is one line on stderr and exit code 2 (argparse's own error prints the
whole usage first).
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

__all__ = ["COMMANDS", "command_of", "parse", "parser"]

COMMANDS: dict[str, str] = {
    "serve": "serve ACP on stdin/stdout (what a bare `acpwire` does)",
    "self-check": "self-test imports and configuration, then exit (exit code 0: a model is"
    " usable; also `--check`)",
    "setup": "configure the model provider interactively",
    "hermes-setup": "run Hermes' own provider and model set-up (`hermes model`)",
    "demo": "run a whole editor conversation offline and print it",
    "tap": "run an agent behind this process's stdio, unchanged, tracing every message"
    " (acpwire tap [options] -- COMMAND [ARGS...]; docs/TAP.md)",
    "check": "a conformance run against an ACP agent: spawn it, drive it through what it"
    " advertises, report each check PASS / FAIL / SKIP (acpwire check [options] -- COMMAND"
    " [ARGS...]; docs/CHECK.md)",
    "trace": "read a trace the tap wrote: `acpwire trace report FILE -o report.html`"
    " (html, md or json; docs/TAP.md)",
}
"""The commands and their one-line help, in the order ``--help`` lists them."""

_FLAGS = {"check": "self-check", "setup": "setup", "hermes_setup": "hermes-setup", "demo": "demo"}
"""The flags that name a command (``--check`` is ``acpwire self-check``, the self-test it
always was; the command ``check`` is the conformance run against an agent): dest -> command."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog.split()[0]} --help)\n")


def _agent(parser: argparse.ArgumentParser, default: object) -> None:
    parser.add_argument(
        "--agent",
        metavar="SPEC",
        default=default,
        help="the agent to serve: auto, default, hermes, a registered name or module:callable"
        " (env ACPWIRE_AGENT)",
    )


def _log_level(parser: argparse.ArgumentParser, default: object) -> None:
    parser.add_argument(
        "--log-level",
        metavar="LEVEL",
        default=default,
        help="DEBUG, INFO, WARNING or ERROR (env ACPWIRE_LOG_LEVEL)",
    )


def _no_unstable(parser: argparse.ArgumentParser, default: object) -> None:
    parser.add_argument(
        "--no-unstable",
        action="store_true",
        default=default,
        help="answer -32601 to unstable methods (session/fork)",
    )


def _yes(parser: argparse.ArgumentParser, default: object) -> None:
    parser.add_argument(
        "--yes", "-y", action="store_true", default=default, help="accept the proposed values"
    )


def parser() -> argparse.ArgumentParser:
    """The whole command line. A command's options are accepted before the command too
    (``acpwire --agent X check`` and ``acpwire check --agent X`` are the same)."""
    top = _Parser(
        prog="acpwire",
        description="The stdio ACP backend an editor launches (bare `acpwire`), and its helpers.",
        epilog="Without a command, acpwire serves ACP on stdin/stdout; stdout carries "
        "protocol frames only, logs go to stderr.",
    )
    top.add_argument("--version", action="store_true", help="print the version and exit")
    _agent(top, None)
    top.add_argument("--check", action="store_true", help="the `self-check` command")
    top.add_argument("--setup", action="store_true", help="the `setup` command")
    top.add_argument("--hermes-setup", action="store_true", help="the `hermes-setup` command")
    _yes(top, False)
    _log_level(top, None)
    _no_unstable(top, False)
    top.add_argument("--demo", action="store_true", help="the `demo` command")
    commands = top.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    sub = {
        name: commands.add_parser(name, help=text, description=text)
        for name, text in COMMANDS.items()
    }
    # SUPPRESS: an option given before the command is not reset by the command's default.
    keep = argparse.SUPPRESS
    for name in ("serve", "self-check"):
        _agent(sub[name], keep)
    for name in ("serve", "self-check", "setup"):
        _log_level(sub[name], keep)
    _no_unstable(sub["serve"], keep)
    _yes(sub["setup"], keep)
    _tap(sub["tap"])
    _check(sub["check"])
    _trace(sub["trace"])
    return top


def _trace(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="trace_command", metavar="ACTION", required=True)
    report = actions.add_parser(
        "report",
        help="a report of one trace: a page (timeline, handshake, latency, violations)",
        description="A report of one trace the tap wrote.",
    )
    report.add_argument("file", metavar="FILE", help="the trace (JSONL)")
    report.add_argument(
        "-o", "--output", metavar="OUT", default=None, help="where to write it (default: stdout)"
    )
    report.add_argument("--format", choices=["html", "md", "json"], default="html")
    report.add_argument(
        "--fail-on-violations",
        action="store_true",
        help="exit 1 when the trace reports violations or requests never answered",
    )


class _Names(argparse.Action):
    """Check names, comma-separated or the option repeated, gathered in one list."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        names = list(getattr(namespace, self.dest, None) or [])
        names += [name.strip() for name in str(values).split(",") if name.strip()]
        setattr(namespace, self.dest, names)


def _check(parser: argparse.ArgumentParser) -> None:
    parser.usage = "%(prog)s [options] -- COMMAND [ARGS...]"
    parser.add_argument(
        "--only",
        action=_Names,
        default=None,
        metavar="NAMES",
        help="run only these checks (comma-separated, or the option repeated; --list names them)",
    )
    parser.add_argument(
        "--skip", action=_Names, default=None, metavar="NAMES", help="leave these checks out"
    )
    parser.add_argument("--list", action="store_true", help="list the checks and exit")
    parser.add_argument("--format", choices=["text", "md", "json", "junit"], default="text")
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        default=None,
        help="write the report here (default: stdout)",
    )
    parser.add_argument(
        "--model-endpoint",
        action="store_true",
        help="start the loopback scripted model and give it to the agent as OPENAI_BASE_URL"
        " and OPENAI_API_KEY; without a model endpoint the checks that need the agent to act"
        " are SKIP",
    )
    parser.add_argument(
        "--agent-env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="add KEY to the agent's environment; {base_url}, {api_key}, {model} (the"
        " loopback model: naming {base_url} starts it) and {tmp} (a scratch folder of the"
        " run) are replaced in VALUE; repeatable",
    )
    parser.add_argument(
        "--hermes-home",
        action="store_true",
        help="start the loopback model and give it to Hermes: a scratch HERMES_HOME whose"
        " config.yaml names it as the custom provider",
    )
    parser.add_argument(
        "--model-name",
        metavar="NAME",
        default="acpwire-check-model",
        help="the model the loopback server lists and {model} names",
    )
    parser.add_argument(
        "--write-tool",
        metavar="NAME",
        default=None,
        help="the agent's file-writing tool the scripted model calls (default: found by name)",
    )
    parser.add_argument(
        "--shell-tool",
        metavar="NAME",
        default=None,
        help="the agent's shell tool the scripted model calls (default: found by name)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=15.0,
        metavar="SECONDS",
        help="how long any one answer (a whole turn included) may take (default 15)",
    )
    parser.add_argument(
        "--exit-timeout",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="how long the agent has to exit once its stdin is closed (default 5)",
    )
    parser.add_argument(
        "--trace",
        metavar="FILE",
        default=None,
        help="write every line either side wrote to FILE (JSON Lines, with what the checker found)",
    )
    parser.add_argument(
        "--agent-log", metavar="FILE", default=None, help="append the agent's stderr to FILE"
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no progress line on stderr as each check ends"
    )
    parser.add_argument(
        "argv", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS...]", help="the agent to run"
    )


def _tap(parser: argparse.ArgumentParser) -> None:
    parser.usage = (
        "%(prog)s [-h] [--trace FILE] [--no-mask] [--no-check] [--quiet] -- COMMAND [ARGS...]"
    )
    parser.add_argument(
        "--trace",
        metavar="FILE",
        default=None,
        help="write the trace to FILE (created 0600, replacing a file there); default: a"
        " file of this run in $ACPWIRE_HOME/traces, the last 20 runs kept",
    )
    parser.add_argument(
        "--no-mask",
        action="store_true",
        help="keep secrets in the trace (authenticate params, MCP server env and headers,"
        " secret-looking env and _meta values)",
    )
    parser.add_argument(
        "--no-check",
        action="store_true",
        help="record only: do not check the messages against the protocol",
    )
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="nothing of the tap's own on stderr, neither the start-up line nor violations"
        " (the agent's stderr passes; violations are still in the trace)",
    )
    parser.add_argument(
        "argv", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS...]", help="the agent to run"
    )


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """``argv`` (default ``sys.argv[1:]``) parsed; exits 2 with one line on a usage error."""
    top = parser()
    args = top.parse_args(sys.argv[1:] if argv is None else argv)
    flagged = [dest for dest in _FLAGS if getattr(args, dest)]
    if args.command and (flagged or args.version):
        flag = (flagged or ["version"])[0].replace("_", "-")
        top.error(f"the command {args.command!r} takes no --{flag}")
    return args


def command_of(args: argparse.Namespace) -> str:
    """The command ``args`` names: ``version``, a flag's command, the sub-command, or
    ``serve``; the flags by precedence as before commands existed."""
    if args.version:
        return "version"
    if args.command:
        return str(args.command)
    for dest in ("hermes_setup", "check", "setup", "demo"):
        if getattr(args, dest):
            return _FLAGS[dest]
    return "serve"
