"""The tool calls shown in permission requests: what is written or read where, which
MCP tool is called with what, and why it is asked.

When a path resolves somewhere else than it is spelt (a symlink on the way), the request
names the resolved target, in the title and in the diff, and says why it is asked
(protected, hard-linked, outside the workspace, linked).
"""

from __future__ import annotations

from acp_v1 import models as m
from acpwire.agent.seam import AccessProposal, EditProposal
from acpwire.approval.policy import EditBatchDecision, EditDecision
from acpwire.render import diff_content, text_content

__all__ = ["access_request", "edit_request", "target_of"]


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
