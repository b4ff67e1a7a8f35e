"""What a running turn asks the user through the editor: approvals (mixed into
:class:`~.services.SessionServices`).

Approvals go through ``session/request_permission`` with the diff (one per file) or the
command, a configurable timeout, and the capability probe's idea of which option kinds
the client understands. Nothing is ever approved by default: a timeout, a cancelled
outcome, an option that was not offered or a failure to reach the client all refuse,
each with its own message for the model. What was granted for the session or the
workspace is remembered (:func:`approval_memory`, :func:`access_memory`).

The tool call a permission request shows (:func:`edit_request`, :func:`access_request`)
says what is written or read where, which MCP tool is called with what, and why it is
asked. When a path resolves somewhere else than it is spelt (a symlink on the way), the
request names the resolved target, in the title and in the diff, and says why it is
asked (protected, hard-linked, outside the workspace, linked).
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING, Any

import anyio

from acp_v1 import models as m
from acpwire.agent.seam import AccessProposal, ApprovalAnswer, CommandProposal, EditProposal
from acpwire.approval.access import ASKING_MODES, EVERY_MODE_EXCEPT, AccessMemory, read_reason
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
from acpwire.approval.policy import (
    EditBatchDecision,
    EditDecision,
    decide_edits,
    policy_for_mode,
)
from acpwire.render import diff_content, text_content
from acpwire.server.editor.null_diffs import request_permission
from acpwire.server.sessions.state import SessionState

if TYPE_CHECKING:
    from acpwire.server.editor.backend_view import Backend


def target_of(proposal: EditProposal, decision: EditDecision) -> str:
    """The path the write lands on (the requested one when it cannot be resolved)."""
    return str(decision.resolved_path) if decision.resolved_path is not None else proposal.path


def _named(proposal: EditProposal, decision: EditDecision) -> str:
    target = target_of(proposal, decision)
    return f"{proposal.path} → {target}" if decision.linked else target


def edit_request(
    call_id: str, group: list[EditProposal], batch: EditBatchDecision, part: str = ""
) -> m.ToolCallUpdate:
    """The pending tool call of an edit permission request for the files of ``group``."""
    pairs = list(zip(group, batch.decisions, strict=True))
    reasons = sorted({reason for _, d in pairs for reason in d.why_asked()})
    title = f"Approve edit{part}: {', '.join(_named(p, d) for p, d in pairs)}"
    if reasons:
        title += f" ({'; '.join(reasons)})"
    content: list[m.ToolCallContent] = []
    if reasons:
        lines = [f"{_named(p, d)}: {'; '.join(d.why_asked())}" for p, d in pairs if d.why_asked()]
        content.append(text_content("Asked because:\n" + "\n".join(lines)))
    content += [diff_content(p, target_of(p, d)) for p, d in pairs]
    return m.ToolCallUpdate(
        tool_call_id=call_id, title=title, kind="edit", status="pending", content=content
    )


def access_request(call_id: str, proposal: AccessProposal, why: str) -> m.ToolCallUpdate:
    """The pending tool call of a read or MCP tool call permission request."""
    if proposal.kind == "read":
        title = f"Read {proposal.target} ({why})"
        body = f"Read {proposal.target}\nAsked because: {why}"
    else:
        what = f"{proposal.target}" if proposal.reason else f"MCP tool {proposal.target}"
        title = f"Call {what} ({why})"
        body = f"Call {what} with {proposal.detail or '{}'}"
    return m.ToolCallUpdate(
        tool_call_id=call_id,
        title=title,
        kind="read" if proposal.kind == "read" else "other",
        status="pending",
        content=[text_content(body)],
    )


__all__ = ["ACCESS_KEY", "MEMORY_KEY", "Approvals", "access_memory", "approval_memory"]

logger = logging.getLogger("acpwire.server.editor.services")
"""The services' logger: the approvals log as they did inside :mod:`~.services`."""

MEMORY_KEY = "approvals"
ACCESS_KEY = "access approvals"


def approval_memory(backend: Backend, state: SessionState) -> ApprovalMemory:
    """The session's approval memory (session grants + the workspace's persistent ones)."""
    memory = state.extra.get(MEMORY_KEY)
    if not isinstance(memory, ApprovalMemory):
        memory = state.extra[MEMORY_KEY] = ApprovalMemory(backend.manager.store)
    return memory


def access_memory(backend: Backend, state: SessionState) -> AccessMemory:
    """The session's read and MCP tool grants (tool grants per workspace in the store)."""
    memory = state.extra.get(ACCESS_KEY)
    if not isinstance(memory, AccessMemory):
        memory = state.extra[ACCESS_KEY] = AccessMemory(backend.manager.store)
    return memory


class Approvals:
    """The approvals of one session's turns; :class:`~.services.SessionServices` sets
    the attributes below and sends the updates."""

    backend: Backend
    state: SessionState
    memory: ApprovalMemory
    access: AccessMemory

    async def send(self, update: Any) -> None:
        raise NotImplementedError

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
        asking = self.state.mode in ASKING_MODES or (
            proposal.every_mode and self.state.mode != EVERY_MODE_EXCEPT
        )
        if not asking:
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
            why = proposal.reason or "MCP tool calls are asked in this mode"
            if await self.backend.blocking(self.access.tool_allowed, workspace, target):
                return None
        shown = AccessProposal(proposal.kind, target, proposal.detail, proposal.reason)
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
