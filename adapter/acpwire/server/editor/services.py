"""What a running turn asks of the editor: approvals, files, terminals, and updates.

The approvals (``session/request_permission``: nothing is ever approved by default) are
:class:`~.approvals.Approvals`, mixed in. File reads and writes go
through the editor when it advertises ``fs`` (so unsaved buffers are seen), else the
agent uses the disk; an error answer of the editor is final
(:mod:`~.refusals`), never a reason to use the disk.

Shell commands run in the editor's own terminal (``terminal/*``, embedded in the tool
call: :func:`run_in_client_terminal`) only when the client advertises ``terminal``. The
editor runs the planned argv in the session cwd: the bubblewrap command line when the
command is sandboxed, else ``env -i`` with the scrubbed environment and ``bash -c``, so
the editor's terminal gets the same sandbox and the same secret-free environment as a
local run. The tool call shows the live terminal; a turn cancel or the tool timeout kills
it; the terminal is always released. A client that does not implement
``terminal/create`` (``-32601``) falls back to the agent's local runner (None); any other
error answer is the editor's refusal and final: the command is not run locally.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

import anyio

from acp_v1 import models as m
from acpwire.agent.seam import CommandPlan, EditorRefused
from acpwire.link.fastpath import ChunkKind
from acpwire.render import terminal_content
from acpwire.sandbox.decide import ESCALATIONS, Escalation
from acpwire.sandbox.plan import plan_command
from acpwire.server.editor.approvals import (
    ACCESS_KEY,
    MEMORY_KEY,
    Approvals,
    access_memory,
    approval_memory,
)
from acpwire.server.editor.refusals import editor_refusal, is_not_offered
from acpwire.server.sessions.provenance import provenance_meta, sends_provenance
from acpwire.server.sessions.state import SessionState

if TYPE_CHECKING:
    from acpwire.server.editor.backend_view import Backend

logger = logging.getLogger(__name__)
OUTPUT_LIMIT = 64 * 1024
TIMEOUT_EXIT = 124
INTERRUPTED_EXIT = 130
"""A command killed by a cancel, when the editor reports no exit code (128 + SIGINT, as a
shell reports Ctrl-C): never the timeout's 124."""
POLL_S = 0.2


async def run_in_client_terminal(
    services: SessionServices,
    call_id: str,
    command: str,
    cwd: str,
    timeout: float,
    plan: CommandPlan,
) -> tuple[int, str] | EditorRefused | None:
    client = services.backend.client
    sid = services.state.id
    if not plan.argv:
        raise ValueError("a command plan for the editor's terminal needs its argv")
    try:
        created = await client.terminal_create(
            m.CreateTerminalRequest(
                session_id=sid,
                command=plan.argv[0],
                args=list(plan.argv[1:]),
                cwd=cwd,
                output_byte_limit=OUTPUT_LIMIT,
            )
        )
    except Exception as exc:
        if is_not_offered(exc):
            logger.info("editor does not implement terminal/create; running locally")
            return None
        logger.info("editor refused the terminal (%s): the command fails", exc)
        return editor_refusal(f"run `{command}`", exc)
    terminal_id = created.terminal_id
    note = ""
    try:
        await services.send(
            m.SessionUpdateToolCallUpdate(
                tool_call_id=call_id, status="in_progress", content=[terminal_content(terminal_id)]
            )
        )
        exit_code: int | None = None
        with anyio.move_on_after(timeout) as deadline:
            async with anyio.create_task_group() as tg:

                async def wait() -> None:
                    nonlocal exit_code
                    done = await client.terminal_wait_for_exit(
                        m.WaitForTerminalExitRequest(session_id=sid, terminal_id=terminal_id)
                    )
                    exit_code = done.exit_code if done.exit_code is not None else 1
                    tg.cancel_scope.cancel()

                async def watch_cancel() -> None:
                    while not services.state.cancel_requested:
                        await anyio.sleep(POLL_S)
                    tg.cancel_scope.cancel()

                tg.start_soon(wait)
                tg.start_soon(watch_cancel)
        if exit_code is None:
            note = "\n[command interrupted]" if services.state.cancel_requested else ""
            if deadline.cancelled_caught:
                note = f"\n[command timed out after {timeout:g}s and was killed]"
            await client.terminal_kill(
                m.KillTerminalRequest(session_id=sid, terminal_id=terminal_id)
            )
        output = await client.terminal_output(
            m.TerminalOutputRequest(session_id=sid, terminal_id=terminal_id)
        )
        truncated = "\n[output truncated by the editor]" if output.truncated else ""
        code = (
            exit_code if exit_code is not None else _killed_code(output, deadline.cancelled_caught)
        )
        return code, output.output + truncated + note
    except Exception as exc:
        logger.warning("editor terminal %s failed: %s", terminal_id, exc)
        return 1, f"[the editor terminal failed: {exc}]"
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            try:
                await client.terminal_release(
                    m.ReleaseTerminalRequest(session_id=sid, terminal_id=terminal_id)
                )
            except Exception as exc:
                logger.debug("releasing terminal %s failed: %s", terminal_id, exc)


def _killed_code(output: m.TerminalOutputResponse, timed_out: bool) -> int:
    """The exit code of a command we killed: the timeout's, or what the editor reports."""
    if timed_out:
        return TIMEOUT_EXIT
    status = output.exit_status
    if status is not None and status.exit_code is not None:
        return status.exit_code
    return INTERRUPTED_EXIT


__all__ = ["ACCESS_KEY", "MEMORY_KEY", "SessionServices", "access_memory", "approval_memory"]


class SessionServices(Approvals):
    """The loop-side services of one session's turns (see ``TurnServices``)."""

    def __init__(self, backend: Backend, state: SessionState) -> None:
        self.backend = backend
        self.state = state
        self.memory = approval_memory(backend, state)
        self.access = access_memory(backend, state)

    async def send(self, update: Any) -> None:
        await self.backend.notifier.update(self.state.id, update)

    async def send_text(self, text: str, kind: ChunkKind) -> None:
        await self.backend.notifier.text(self.state.id, text, kind)

    async def read_file(self, path: str) -> str | EditorRefused | None:
        """The editor's text of ``path`` when it offers ``fs.readTextFile``; None = use the
        disk (not offered, or no such file); a refusal is final (nothing read locally)."""
        probe = self.backend.probe
        if probe is None or not probe.can_read_files:
            return None
        try:
            response = await self.backend.client.fs_read_text_file(
                m.ReadTextFileRequest(session_id=self.state.id, path=path)
            )
        except Exception as exc:
            if is_not_offered(exc):
                logger.info("editor does not implement fs/read_text_file; reading the disk")
                return None
            if not await anyio.to_thread.run_sync(os.path.lexists, path):
                logger.debug("editor could not read %s (%s); no such file", path, exc)
                return None  # nothing to read anywhere: the tool says "not found"
            logger.info("editor refused to read %s (%s): the read fails", path, exc)
            return editor_refusal(f"read {path}", exc)
        if not response.content and probe.empty_read_may_mean_missing:
            # CodeCompanion answers "" for a file that does not exist: the disk decides.
            exists = await anyio.to_thread.run_sync(os.path.exists, path)
            if not exists:
                logger.debug("editor read %s as empty; it is not on disk: missing", path)
                return None
        return response.content

    async def write_file(self, path: str, content: str) -> bool | EditorRefused:
        """True once the editor wrote ``path``; False = write the disk (``fs.writeTextFile``
        not offered); a refusal is final (nothing written locally)."""
        probe = self.backend.probe
        if probe is None or not probe.can_write_files:
            return False
        try:
            await self.backend.client.fs_write_text_file(
                m.WriteTextFileRequest(session_id=self.state.id, path=path, content=content)
            )
        except Exception as exc:
            if is_not_offered(exc):
                logger.info("editor does not implement fs/write_text_file; writing the disk")
                return False
            logger.info("editor refused to write %s (%s): the edit fails", path, exc)
            return editor_refusal(f"write {path}", exc)
        return True

    def plan_command(
        self, command: str, cwd: str, *, sandbox: str, justification: str
    ) -> CommandPlan:
        """The session mode, the sandbox and the settings decide (on the agent's thread)."""
        escalation: Escalation = "sandbox"
        for known in ESCALATIONS:
            if known == sandbox:
                escalation = known
        return plan_command(
            command,
            cwd,
            mode=self.state.mode,
            settings=self.backend.settings,
            escalation=escalation,
            justification=justification,
        )

    async def run_command(
        self, call_id: str, command: str, cwd: str, timeout: float, plan: CommandPlan
    ) -> tuple[int, str] | EditorRefused | None:
        """Run in an editor terminal (when advertised); the tool call embeds it live.
        None = run locally (not offered); a refusal of ``terminal/create`` is final."""
        probe = self.backend.probe
        if probe is None or not probe.can_use_terminal:
            return None
        return await run_in_client_terminal(self, call_id, command, cwd, timeout, plan)

    async def rotated(self, new_id: str, reason: str) -> None:
        """The agent's internal id moved: record the lineage, tell the client."""
        manager = self.backend.manager
        previous = await self.backend.blocking(manager.rotate_internal, self.state, new_id, reason)
        meta = None
        if sends_provenance(self.backend.factory):
            meta = provenance_meta(manager.lineage, self.state.id, new_id, previous)
        await self.backend.turns.send_info(self.state, meta=dict(meta) if meta else None)
