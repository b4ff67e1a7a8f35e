"""The ``terminal`` tool and the default local-subprocess :class:`CommandRunner`.

Commands run with ``bash -c`` in the turn's cwd, in their own process group so that a
timeout or an interrupt kills the whole tree. Commands matching the danger table run
only after the user allows them. Output (stdout and stderr interleaved) is capped,
keeping its head and tail.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
from collections.abc import Mapping
from typing import IO, Any, ClassVar

from acpwire.agent.cancel import CancelToken
from acpwire.agent.seam import CommandProposal
from acpwire.agent.tools.args import ToolArgError, opt_int, req_str
from acpwire.agent.tools.base import ToolContext, ToolOutcome, failure
from acpwire.agent.tools.danger import dangerous_reason

BLOCKED = "BLOCKED: the user denied this command."
HEAD_BYTES = 16_000
TAIL_BYTES = 32_000
TIMEOUT_EXIT = 124


class _Capture:
    """Keeps the first and last bytes of a stream, counting what was dropped."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = HEAD_BYTES - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            del self.tail[: max(0, len(self.tail) - TAIL_BYTES)]

    def drain(self, stream: IO[bytes]) -> None:
        try:
            while chunk := os.read(stream.fileno(), 65536):
                self.add(chunk)
        finally:
            stream.close()

    def text(self) -> str:
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        omitted = self.total - len(self.head) - len(self.tail)
        if omitted > 0:
            return f"{head}\n... [{omitted} bytes of output omitted] ...\n{tail}"
        return head + tail


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


class LocalRunner:
    """Runs commands as local subprocesses (the default :class:`CommandRunner`)."""

    def run(self, command: str, cwd: str, timeout: float, cancel: CancelToken) -> tuple[int, str]:
        env = {**os.environ, "PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb"}
        process = subprocess.Popen(
            ["bash", "-c", command],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        assert process.stdout is not None  # stdout=PIPE above
        capture = _Capture()
        reader = threading.Thread(target=capture.drain, args=(process.stdout,), daemon=True)
        reader.start()
        unregister = cancel.on_cancel(lambda: _kill_group(process))
        timed_out = False
        try:
            exit_code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(process)
            exit_code = process.wait()
        finally:
            unregister()
        # A background child may keep the pipe open; do not wait for it for long.
        reader.join(timeout=2.0)
        output = capture.text()
        if timed_out:
            return TIMEOUT_EXIT, f"{output}\n[command timed out after {timeout:g}s and was killed]"
        if cancel.cancelled:
            return exit_code, f"{output}\n[command interrupted]"
        return exit_code, output


class TerminalTool:
    name = "terminal"
    description = (
        "Run a shell command (bash) in the working directory and return its output and exit code."
    )
    parameters: ClassVar[Mapping[str, Any]] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The shell command to run."},
            "timeout": {
                "type": "integer",
                "default": 120,
                "description": "Seconds before the command is killed.",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    }

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        command = req_str(args, "command")
        timeout = opt_int(args, "timeout", 120, minimum=1, maximum=3600)
        reason = dangerous_reason(command)
        if reason is not None:
            answer = ctx.hooks.approve_command(CommandProposal(command=command, reason=reason))
            if answer not in ("once", "session", "always"):
                return failure(BLOCKED, command=command, reason=reason)
        if not os.path.isdir(ctx.cwd):
            raise ToolArgError(f"working directory not found: {ctx.cwd}")
        remote = ctx.hooks.run_command(ctx.call_id, command, ctx.cwd, float(timeout))
        if remote is not None:
            exit_code, output = remote
        else:
            exit_code, output = ctx.runner.run(command, ctx.cwd, float(timeout), ctx.cancel)
        if ctx.cancel.cancelled:
            return failure("interrupted", output=output, exit_code=exit_code)
        payload = json.dumps({"output": output, "exit_code": exit_code}, ensure_ascii=False)
        return ToolOutcome(payload, failed=exit_code != 0)
