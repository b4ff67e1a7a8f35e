"""``acpwire tap [--trace FILE] [--no-mask] [--no-check] [--quiet] -- COMMAND [ARGS...]``: a
transparent stdio proxy an editor launches in place of an agent, recording every message
and checking it against the protocol (docs/TAP.md).

What either side writes reaches the other byte for byte (raw reads and writes, nothing
decoded on the way: a partial last line or bytes that are not JSON pass unchanged); end
of input from the editor closes the agent's stdin; the agent's stderr is the tap's; its
exit status is the tap's (killed by a signal: 128 + the signal's number, as a shell
says). The agent runs in a process group of its own, so a Ctrl-C sent to the editor's
group reaches it once, through the tap, which forwards SIGINT, SIGTERM and SIGHUP to it
and goes on until it exits.

The trace (:mod:`._trace`, secrets masked by :mod:`._mask`) is written off the
forwarding path, by a recorder process of its own (:mod:`._recorder_process`), to
``--trace FILE`` or a file of this run in the config home's ``traces/`` folder
(:mod:`._files`), with the violations the protocol checker found (:mod:`._check`:
:mod:`acpwire.conformance`, imported by the recorder with the first line). The tap
itself runs on the standard library alone: no pydantic, no bindings, no backend.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Final

from acpwire.cli.tap._files import TraceFileError, create_trace, default_trace
from acpwire.cli.tap._recorder_process import RecorderProcess
from acpwire.cli.tap._trace import AGENT_TO_CLIENT, CLIENT_TO_AGENT, Direction

__all__ = ["FORWARDED", "exit_status", "run", "tap"]

FORWARDED: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals the tap passes on to the agent (once each time it gets one)."""
_CHUNK: Final = 1 << 16
_DRAIN_S: Final = 5.0
"""How long the agent's stdout may stay open once it has exited (a child of its own
holding it): then the tap exits anyway."""


def run(args: argparse.Namespace) -> int:
    command = list(args.argv)
    if command[:1] == ["--"]:
        del command[0]
    if not command:
        print(
            "acpwire tap: error: name the agent's command after -- (acpwire tap -- COMMAND ...)",
            file=sys.stderr,
        )
        return 2
    trace = Path(args.trace) if args.trace else None
    return tap(
        command,
        trace=trace,
        mask=not args.no_mask,
        quiet=args.quiet,
        check=not args.no_check,
    )


def exit_status(returncode: int) -> int:
    """A child's status as a shell reports it: killed by signal N is 128 + N."""
    return returncode if returncode >= 0 else 128 - returncode


def tap(
    command: Sequence[str],
    *,
    trace: Path | None = None,
    mask: bool = True,
    quiet: bool = False,
    check: bool = True,
) -> int:
    """Run ``command`` behind this process's stdio, tracing it (with ``check``, each
    message checked against the protocol, the findings in the trace and, unless
    ``quiet``, on stderr); its exit status."""
    start = time.monotonic()
    try:
        if trace is None:
            trace, fd = default_trace()
        else:
            fd = create_trace(trace)
    except TraceFileError as exc:
        print(f"acpwire tap: {exc}", file=sys.stderr)
        return 2
    signals = _Forwarder()
    try:
        recorder = RecorderProcess(fd, start=start, mask=mask, check=check, report=not quiet)
    except OSError as exc:
        signals.restore()
        print(f"acpwire tap: cannot start the trace recorder: {exc}", file=sys.stderr)
        return 2
    try:
        try:
            agent = subprocess.Popen(
                list(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,
                process_group=0,
            )
        except OSError as exc:
            print(f"acpwire tap: cannot run {command[0]}: {exc}", file=sys.stderr)
            return 127 if isinstance(exc, FileNotFoundError) else 126
        signals.attach(agent.pid)
        if not quiet:
            print(
                f"acpwire tap: {' '.join(command)} (pid {agent.pid}), trace {trace}",
                file=sys.stderr,
            )
        assert agent.stdin is not None and agent.stdout is not None
        to_agent, from_agent = agent.stdin, agent.stdout
        pumps = [
            threading.Thread(
                target=_pump,
                args=(0, to_agent.fileno(), CLIENT_TO_AGENT, recorder, to_agent.close),
                name="acpwire-tap-to-agent",
                daemon=True,  # may wait for the editor's input after the agent is gone
            ),
            threading.Thread(
                target=_pump,
                args=(from_agent.fileno(), 1, AGENT_TO_CLIENT, recorder, None),
                name="acpwire-tap-from-agent",
                daemon=True,
            ),
        ]
        for pump in pumps:
            pump.start()
        returncode = agent.wait()
        pumps[1].join(_DRAIN_S)
        return exit_status(returncode)
    finally:
        signals.restore()
        recorder.close()


def _pump(
    source: int,
    target: int,
    direction: Direction,
    recorder: RecorderProcess,
    at_end: Callable[[], None] | None,
) -> None:
    """Forward ``source`` to ``target`` as read until end of input, recording it. When
    ``target`` is gone the input is still read (and recorded), so its writer never blocks."""
    delivering = True
    while True:
        try:
            data = os.read(source, _CHUNK)
        except OSError:
            data = b""
        if not data:
            break
        # Sent to the recorder before it is written on: the other side cannot answer a
        # request before the recorder has it. One pipe write; the recorder's own
        # process does the rest.
        recorder.chunk(direction, data, time.monotonic())
        if delivering:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(target, view) :]
            except OSError:
                delivering = False
    recorder.end(direction, time.monotonic())
    if at_end is not None:
        with contextlib.suppress(OSError):
            at_end()


class _Forwarder:
    """SIGINT, SIGTERM and SIGHUP passed on to the agent; those that came before it
    started are passed on once it has."""

    def __init__(self) -> None:
        self._pid: int | None = None
        self._early: list[int] = []
        self._saved = {signum: signal.signal(signum, self._handle) for signum in FORWARDED}

    def attach(self, pid: int) -> None:
        self._pid = pid
        early, self._early = self._early, []
        for signum in early:
            self._send(signum)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self._pid is None:
            self._early.append(signum)
        else:
            self._send(signum)

    def _send(self, signum: int) -> None:
        assert self._pid is not None
        with contextlib.suppress(ProcessLookupError):
            os.kill(self._pid, signum)

    def restore(self) -> None:
        for signum, handler in self._saved.items():
            signal.signal(signum, handler)
