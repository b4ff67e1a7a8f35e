"""The editor side of ``terminal/*`` for backend tests: real subprocesses, output in files.

Each terminal is a ``subprocess.Popen`` in its own process group writing stdout and stderr
to a file, so output accumulates without a reader task; ``terminal/output`` reads the file.
Every terminal is recorded in :attr:`TerminalHost.terminals` for the test to inspect.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from typing import IO

import anyio

from acp_v1 import models as m
from acpwire.rpc import resource_not_found


@dataclass
class EditorTerminal:
    request: m.CreateTerminalRequest
    process: subprocess.Popen[bytes]
    log: IO[bytes]
    killed: bool = False
    released: bool = False

    def output(self) -> str:
        self.log.flush()
        with open(self.log.name, "rb") as handle:
            return handle.read().decode("utf-8", errors="replace")


class TerminalHost:
    """Mixed into the test editor: implements the client's ``terminal/*`` methods."""

    terminals: dict[str, EditorTerminal]

    def _terminal(self, terminal_id: str) -> EditorTerminal:
        found = self.terminals.get(terminal_id)
        if found is None or found.released:
            raise resource_not_found(f"terminal {terminal_id}")
        return found

    async def terminal_create(self, params: m.CreateTerminalRequest) -> m.CreateTerminalResponse:
        log = tempfile.NamedTemporaryFile(prefix="editor-terminal-", delete=False)  # noqa: SIM115
        process = subprocess.Popen(
            [params.command, *(params.args or [])],
            cwd=params.cwd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = EditorTerminal(params, process, log)
        return m.CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(self, params: m.TerminalOutputRequest) -> m.TerminalOutputResponse:
        terminal = self._terminal(params.terminal_id)
        code = terminal.process.poll()
        status = None if code is None else m.TerminalExitStatus(exit_code=max(code, 0))
        return m.TerminalOutputResponse(
            output=terminal.output(), truncated=False, exit_status=status
        )

    async def terminal_wait_for_exit(
        self, params: m.WaitForTerminalExitRequest
    ) -> m.WaitForTerminalExitResponse:
        terminal = self._terminal(params.terminal_id)
        code = await anyio.to_thread.run_sync(terminal.process.wait, abandon_on_cancel=True)
        if code < 0:
            return m.WaitForTerminalExitResponse(signal=signal.Signals(-code).name)
        return m.WaitForTerminalExitResponse(exit_code=code)

    async def terminal_kill(self, params: m.KillTerminalRequest) -> m.KillTerminalResponse:
        terminal = self._terminal(params.terminal_id)
        terminal.killed = True
        _kill(terminal.process)
        return m.KillTerminalResponse()

    async def terminal_release(self, params: m.ReleaseTerminalRequest) -> m.ReleaseTerminalResponse:
        terminal = self._terminal(params.terminal_id)
        terminal.released = True
        _kill(terminal.process)
        terminal.log.close()
        os.unlink(terminal.log.name)
        return m.ReleaseTerminalResponse()


def _kill(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
