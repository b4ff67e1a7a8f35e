"""The ``terminal`` tool and the default local-subprocess :class:`CommandRunner`.

Commands run with ``bash -c`` in the turn's cwd, in their own process group so that a
timeout or an interrupt kills the whole tree, as the turn's hooks plan them
(:meth:`~acpwire.agent.seam.TurnHooks.plan_command`: in the sandbox or not, asked first
or not, with which environment). The model may ask for more than the sandbox allows
(``sandbox: "network"`` or ``"none"`` with a justification); that is asked. Output
(stdout and stderr interleaved) is capped, keeping its head and tail.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import replace
from typing import IO, Any, ClassVar

from acpwire.agent.cancel import CancelToken
from acpwire.agent.embedded.tools.args import ToolArgError, opt_int, opt_str, req_str
from acpwire.agent.embedded.tools.base import ToolContext, ToolOutcome, failure
from acpwire.agent.embedded.tools.danger import dangerous_reason
from acpwire.agent.seam import CommandPlan, CommandProposal, GuardRefused, GuardReport
from acpwire.config.environment import command_env

BLOCKED = "BLOCKED: the user denied this command."
HEAD_BYTES = 16_000
TAIL_BYTES = 32_000
TIMEOUT_EXIT = 124
SANDBOX_NOTE = (
    "The command ran in the sandbox (workspace and /tmp writable, .git and protected paths"
    " read-only, no network). If it failed for that, call terminal again with sandbox"
    " 'network' or 'none' and a justification: the user is asked."
)


REMOVED_NOTE = (
    "The sandbox does not let a command create protected paths (git directories and hooks,"
    " .env and .envrc files, editor settings such as .vscode, keys, the user's"
    " sensitive_paths): the ones this command created were moved out of the workspace into"
    " acpwire's quarantine. Do not try to recreate them another way; if the user wants"
    " them, tell the user, or run the command with sandbox 'none' (the user is asked)."
)


def _removed(report: GuardReport) -> dict[str, object]:
    """The guard's report for the tool result (nothing when it had nothing to say)."""
    extra: dict[str, object] = {}
    if report.removed:
        extra["protected_paths_removed"] = [
            {"path": path, "why": why, "moved_to": where} for path, why, where in report.removed
        ]
        extra["protected_paths"] = REMOVED_NOTE
    if report.note:
        extra["sandbox_check"] = report.note
    return extra


def unsandboxed_plan(command: str) -> CommandPlan:
    """The plan of hooks that have no sandbox and no session mode (tests, a bare agent):
    ``bash -c`` with the scrubbed environment, asked only when the danger patterns flag it."""
    return CommandPlan(dangerous_reason(command), env=command_env())


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

    def run(
        self,
        command: str,
        cwd: str,
        timeout: float,
        cancel: CancelToken,
        plan: CommandPlan | None = None,
    ) -> tuple[int, str]:
        argv = list(plan.argv) if plan is not None and plan.argv else ["bash", "-c", command]
        env = plan.env if plan is not None and plan.env is not None else command_env()
        process = subprocess.Popen(
            argv,
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
            "sandbox": {
                "type": "string",
                "enum": ["sandbox", "network", "none"],
                "default": "sandbox",
                "description": (
                    "Commands run in a sandbox: the workspace and /tmp writable, no network."
                    " Ask for 'network' or 'none' (no sandbox) only when the command needs"
                    " it; the user is asked first."
                ),
            },
            "justification": {
                "type": "string",
                "description": "Why the command needs more than the sandbox (shown to the user).",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    }

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        command = req_str(args, "command")
        timeout = opt_int(args, "timeout", 120, minimum=1, maximum=3600)
        sandbox = opt_str(args, "sandbox") or "sandbox"
        if sandbox not in ("sandbox", "network", "none"):
            raise ToolArgError("sandbox must be 'sandbox', 'network' or 'none'")
        justification = opt_str(args, "justification") or ""
        if not os.path.isdir(ctx.cwd):
            raise ToolArgError(f"working directory not found: {ctx.cwd}")
        plan = ctx.hooks.plan_command(
            command, ctx.cwd, sandbox=sandbox, justification=justification
        )
        if plan.ask is not None:
            proposal = CommandProposal(
                command=command, reason=plan.ask, leaves_sandbox=plan.leaves_sandbox
            )
            answer = ctx.hooks.approve_command(proposal)
            if answer not in ("once", "session", "always"):
                return failure(BLOCKED, command=command, reason=plan.ask)
        guard = plan.guard
        if guard is not None:
            try:
                plan = replace(plan, argv=guard.start())
            except GuardRefused as exc:
                return failure(str(exc), command=command, **_removed(exc.report))
        report = GuardReport()
        try:
            remote = ctx.hooks.run_command(ctx.call_id, command, ctx.cwd, float(timeout), plan)
            if remote is not None:
                exit_code, output = remote
            else:
                exit_code, output = ctx.runner.run(
                    command, ctx.cwd, float(timeout), ctx.cancel, plan
                )
        finally:
            if guard is not None:
                report = guard.finish()
        if ctx.cancel.cancelled:
            return failure("interrupted", output=output, exit_code=exit_code, **_removed(report))
        result: dict[str, object] = {"output": output, "exit_code": exit_code, **_removed(report)}
        if plan.sandboxed and exit_code != 0:
            result["sandbox"] = SANDBOX_NOTE
        payload = json.dumps(result, ensure_ascii=False)
        return ToolOutcome(payload, failed=exit_code != 0 or bool(report.removed))
