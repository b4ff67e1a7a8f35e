"""What a running turn asks of the editor: approvals, files, terminals, and updates.

The approvals (``session/request_permission``: nothing is ever approved by default) are
:class:`~.approvals.Approvals`, mixed in. File reads and writes go through the editor
when it advertises ``fs`` (so unsaved buffers are seen), else the agent uses the disk; an
error answer of the editor is final (``editor_errors``), never a reason to use the disk.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

import anyio

from acp_v1 import models as m
from acpwire.agent.seam import CommandPlan, EditorRefused
from acpwire.fastpath import ChunkKind
from acpwire.provenance import provenance_meta
from acpwire.sandbox.decide import ESCALATIONS, Escalation
from acpwire.sandbox.plan import plan_command

from .approvals import ACCESS_KEY, MEMORY_KEY, Approvals, access_memory, approval_memory
from .editor_errors import editor_refusal, is_not_offered
from .state import SessionState
from .terminals import run_in_client_terminal

if TYPE_CHECKING:
    from .core import BackendCore

__all__ = ["ACCESS_KEY", "MEMORY_KEY", "SessionServices", "access_memory", "approval_memory"]

logger = logging.getLogger(__name__)


class SessionServices(Approvals):
    """The loop-side services of one session's turns (see ``TurnServices``)."""

    def __init__(self, backend: BackendCore, state: SessionState) -> None:
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
        meta = provenance_meta(manager.lineage, self.state.id, new_id, previous)
        await self.backend.turns.send_info(self.state, meta=dict(meta) if meta else None)
