"""Constructors for the content blocks of tool calls (text and diffs)."""

from __future__ import annotations

from acp_v1.models import (
    ContentBlockText,
    ToolCallContentContent,
    ToolCallContentDiff,
    ToolCallContentTerminal,
)
from acpwire.agent.seam import EditProposal

Content = ToolCallContentContent | ToolCallContentDiff | ToolCallContentTerminal
"""One entry of a tool call's ``content`` list."""


def text_content(text: str) -> ToolCallContentContent:
    return ToolCallContentContent(content=ContentBlockText(text=text))


def diff_content(proposal: EditProposal, path: str) -> ToolCallContentDiff:
    """A diff block for ``proposal``; ``path`` is its absolute path."""
    return ToolCallContentDiff(path=path, old_text=proposal.old_text, new_text=proposal.new_text)
