"""``acpwire check [options] -- COMMAND [ARGS...]``: a conformance run against an ACP agent
(:func:`acpwire.conformance.run_checks`), its report on stdout or in a file.

Each check's status goes to stderr as it ends (not with ``--quiet``). Exit code 0 when
no check failed, 1 when one did, 2 for a usage error (no command, an
unknown check name, a report that cannot be written), 127 / 126 when the command cannot
be started (not found / not executable), as a shell says. docs/CHECK.md.
"""

from __future__ import annotations

import argparse
import errno
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acpwire.conformance.run import CheckResult

__all__ = ["run"]


def _usage(message: str) -> int:
    print(f"acpwire check: error: {message}", file=sys.stderr)
    return 2


def _env(pairs: list[str]) -> dict[str, str] | str:
    env: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            return f"--agent-env {pair!r}: expected KEY=VALUE"
        env[key] = value
    return env


def _progress(result: CheckResult) -> None:
    print(f"acpwire check: {result.status} {result.name}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    from acpwire.conformance.report import render
    from acpwire.conformance.run import BY_NAME, CHECKS, AgentStartError, RunOptions, run_checks

    if args.list:
        width = max(len(check.name) for check in CHECKS)
        for check in CHECKS:
            model = " (needs a model)" if check.needs_model else ""
            print(f"{check.name:<{width}}  {check.what}{model}; {check.spec}")
        return 0
    command = list(args.argv)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        return _usage("name the agent's command after -- (acpwire check -- COMMAND ...)")
    only, skip = args.only, args.skip or []
    unknown = sorted({*(only or ()), *skip} - set(BY_NAME))
    if unknown:
        import difflib  # only for a misspelt name

        named = []
        for name in unknown:
            close = difflib.get_close_matches(name, BY_NAME, n=1)
            named.append(f"{name} (did you mean {close[0]}?)" if close else name)
        return _usage(f"unknown check {', '.join(named)} (acpwire check --list names them)")
    env = _env(args.agent_env)
    if isinstance(env, str):
        return _usage(env)
    if args.timeout <= 0 or args.exit_timeout <= 0:
        return _usage("--timeout and --exit-timeout take a positive number of seconds")
    options = RunOptions(
        command=command,
        only=frozenset(only) if only is not None else None,
        skip=frozenset(skip),
        timeout=args.timeout,
        exit_timeout=args.exit_timeout,
        agent_env=env,
        model_endpoint=args.model_endpoint,
        hermes_home=args.hermes_home,
        model_name=args.model_name,
        write_tool=args.write_tool,
        shell_tool=args.shell_tool,
        trace=args.trace,
        agent_log=args.agent_log,
        progress=None if args.quiet else _progress,
    )
    try:
        report = run_checks(options)
    except AgentStartError as exc:
        print(f"acpwire check: {exc.strerror}", file=sys.stderr)
        return 127 if exc.errno == errno.ENOENT else 126
    except KeyboardInterrupt:
        print("acpwire check: interrupted (the agent was ended)", file=sys.stderr)
        return 130
    text = render(report, args.format)
    if args.output is None:
        sys.stdout.write(text)
    else:
        try:
            Path(args.output).write_text(text)
        except OSError as exc:
            print(f"acpwire check: cannot write {args.output}: {exc}", file=sys.stderr)
            sys.stdout.write(text)
            return 2
        print(
            f"acpwire check: {report.count('FAIL')} failed, {report.count('PASS')} passed, "
            f"{report.count('SKIP')} skipped; report in {args.output}",
            file=sys.stderr,
        )
    return 0 if report.ok else 1
