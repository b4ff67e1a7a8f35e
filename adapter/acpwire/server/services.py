"""What a running turn asks of the editor: approvals, files, and provenance updates.

Approvals go through ``session/request_permission`` with the diff (one per file) or the
command, a configurable timeout, and the capability probe's idea of which option kinds
the client understands. Nothing is ever approved by default: a timeout, a cancelled
outcome, an option that was not offered or a failure to reach the client all refuse,
each with its own message for the model. File reads and writes go through the editor
when it advertises ``fs`` (so unsaved buffers are seen), else the agent uses the disk; an
error answer of the editor is final (``editor_errors``), never a reason to use the disk.
"""

from __future__ import annotations

import functools
import logging
import os
from typing import TYPE_CHECKING, Any

import anyio

from acp_v1 import models as m
from acpwire.agent.seam import (
    AccessProposal,
    ApprovalAnswer,
    CommandPlan,
    CommandProposal,
    EditorRefused,
    EditProposal,
)
from acpwire.approval.access import ASKING_MODES, AccessMemory, read_reason
from acpwire.approval.commands import command_text, command_title, memory_key
from acpwire.approval.memory import ApprovalMemory
from acpwire.approval.messages import refusal_message, remembered_deny_message
from acpwire.approval.permissions import (
    TIMED_OUT,
    Decision,
    build_access_options,
    build_command_options,
    build_edit_options,
    interpret_outcome,
    is_allowed,
    to_seam_answer,
)
from acpwire.approval.policy import decide_edits, policy_for_mode
from acpwire.fastpath import ChunkKind
from acpwire.provenance import provenance_meta
from acpwire.render import diff_content, text_content
from acpwire.sandbox.decide import ESCALATIONS, Escalation
from acpwire.sandbox.plan import plan_command

from ._prompts import access_request, edit_request
from .editor_errors import editor_refusal, is_not_offered
from .nulls import request_permission
from .state import SessionState
from .terminals import run_in_client_terminal

if TYPE_CHECKING:
    from .core import BackendCore

logger = logging.getLogger(__name__)
MEMORY_KEY = "approvals"
ACCESS_KEY = "access approvals"


def approval_memory(backend: BackendCore, state: SessionState) -> ApprovalMemory:
    """The session's approval memory (session grants + the workspace's persistent ones)."""
    memory = state.extra.get(MEMORY_KEY)
    if not isinstance(memory, ApprovalMemory):
        memory = state.extra[MEMORY_KEY] = ApprovalMemory(backend.manager.store)
    return memory


def access_memory(backend: BackendCore, state: SessionState) -> AccessMemory:
    """The session's read and MCP tool grants (tool grants per workspace in the store)."""
    memory = state.extra.get(ACCESS_KEY)
    if not isinstance(memory, AccessMemory):
        memory = state.extra[ACCESS_KEY] = AccessMemory(backend.manager.store)
    return memory


class SessionServices:
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

    async def _ask(
        self, tool_call: m.ToolCallUpdate, options: list[m.PermissionOption]
    ) -> Decision:
        timeout = self.backend.settings.approval_timeout_s
        request = m.RequestPermissionRequest(
            session_id=self.state.id, tool_call=tool_call, options=options
        )
        outcome: object
        try:
            with anyio.fail_after(timeout):
                outcome = await request_permission(self.backend.client, request)
        except TimeoutError:
            outcome = TIMED_OUT
        except Exception as exc:  # the client failed or rejected the request
            outcome = exc
        decision = interpret_outcome(outcome, {o.option_id for o in options})
        if decision == "cancelled" and not self.state.cancel_requested:
            logger.info("permission request dismissed by the client (cancelled outcome): denied")
        return decision

    async def approve_edits(
        self, call_id: str, proposals: list[EditProposal]
    ) -> tuple[bool, str | None]:
        """One request showing every file's diff; to a client whose diff view shows only
        the first (CodeCompanion), one request per file, each file's approval checked
        again against what the previous answer granted (sensitive files still ask)."""
        probe = self.backend.probe
        one_by_one = len(proposals) > 1 and probe is not None and probe.shows_first_content_only
        remaining = list(proposals)
        unasked = False
        while remaining:
            group = remaining[:1] if one_by_one else remaining
            batch = await self.backend.blocking(
                functools.partial(
                    decide_edits,
                    group,
                    cwd=self.state.cwd,
                    policy=self.memory.edit_policy(policy_for_mode(self.state.mode)),
                    extra_sensitive=self.backend.settings.sensitive_paths,
                    homes=(self.backend.settings.home,),
                )
            )
            if batch.auto_approve:
                logger.info("edit %s approved without asking: %s", call_id, batch.reason)
                unasked = True
            else:
                done = len(proposals) - len(remaining)
                part = f" ({done + 1} of {len(proposals)})" if one_by_one else ""
                tool_call = edit_request(call_id, group, batch, part)
                options = build_edit_options(allow_session=batch.grantable)
                decision = await self._ask(tool_call, options)
                self.memory.record_edit(decision)
                if not is_allowed(decision):
                    timeout = self.backend.settings.approval_timeout_s
                    return False, refusal_message(decision, subject="edit", timeout_s=timeout)
            remaining = remaining[len(group) :]
        if unasked:  # the client saw no request for some files: show every diff now
            diffs: list[m.ToolCallContent] = [diff_content(p, p.path) for p in proposals]
            await self.send(
                m.SessionUpdateToolCallUpdate(
                    tool_call_id=call_id, status="in_progress", content=diffs
                )
            )
        return True, None

    async def approve_command(
        self, call_id: str | None, proposal: CommandProposal
    ) -> tuple[ApprovalAnswer, str | None]:
        workspace = self.state.cwd
        key = memory_key(proposal.command, leaves_sandbox=proposal.leaves_sandbox)
        remembered = self.memory.check_command(workspace, key)
        if remembered == "allow" and not proposal.one_time:
            return "session", None
        if remembered == "deny":
            return "deny", remembered_deny_message("command")
        probe = self.backend.probe
        kinds = (
            set(probe.permission_option_kinds())
            if probe
            else {"allow_once", "allow_always", "reject_once"}
        )
        options = build_command_options(
            kinds,
            allow_permanent=proposal.allow_permanent,
            one_time=proposal.one_time,
            one_per_kind=probe.one_option_per_kind if probe else False,
        )
        tool_call = m.ToolCallUpdate(
            tool_call_id=call_id or f"perm-{self.state.id[:8]}",
            title=command_title(proposal.reason, proposal.command),
            kind="execute",
            status="pending",
            content=[text_content(command_text(proposal.reason, proposal.command))],
            raw_input={"command": proposal.command, "reason": proposal.reason},
        )
        decision = await self._ask(tool_call, options)
        if not proposal.one_time:
            self.memory.record(workspace, key, decision)
            if decision == "always" and not proposal.leaves_sandbox:
                await self._share_always(proposal.command)
        if is_allowed(decision):
            return to_seam_answer(decision), None
        timeout = self.backend.settings.approval_timeout_s
        return "deny", refusal_message(decision, subject="command", timeout_s=timeout)

    async def approve_access(self, call_id: str, proposal: AccessProposal) -> str | None:
        """In Default mode, a read outside the workspace or of a protected path, and an MCP
        tool call the user has not allowed, are asked; None = go ahead."""
        if self.state.mode not in ASKING_MODES:
            return None
        workspace, target = self.state.cwd, proposal.target
        if proposal.kind == "read":
            settings = self.backend.settings
            target, why = await self.backend.blocking(
                functools.partial(
                    read_reason,
                    proposal.target,
                    cwd=workspace,
                    extra_sensitive=settings.sensitive_paths,
                    homes=(settings.home,),
                )
            )
            if why is None or self.access.read_allowed(target):
                return None
        else:
            why = "MCP tool calls are asked in this mode"
            if await self.backend.blocking(self.access.tool_allowed, workspace, target):
                return None
        shown = AccessProposal(proposal.kind, target, proposal.detail)
        decision = await self._ask(
            access_request(call_id, shown, why), build_access_options(proposal.kind)
        )
        if not is_allowed(decision):
            timeout = self.backend.settings.approval_timeout_s
            return refusal_message(decision, subject=proposal.kind, timeout_s=timeout)
        if proposal.kind == "read":
            self.access.allow_read(target)
        else:
            await self.backend.blocking(self.access.record_tool, workspace, target, decision)
        return None

    async def _share_always(self, command: str) -> None:
        """Record an "always allow" where the agent's own front ends honour it too
        (``factory.shared_approvals``: Hermes' command_allowlist)."""
        shared = getattr(self.backend.factory, "shared_approvals", None)
        if not callable(shared):
            return
        try:
            await self.backend.blocking(shared().remember, command)
        except Exception:
            logger.warning("could not record the approval in the agent's own list", exc_info=True)

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
