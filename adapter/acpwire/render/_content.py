"""Constructors for the content blocks of tool calls (text and diffs)."""

from __future__ import annotations

from typing import TypeAlias

from acp_v1 import models as m
from acpwire.agent.seam import EditProposal

# A string: naming the models here would import them with this module (they are loaded
# when the first tool call is rendered).
Content: TypeAlias = "m.ToolCallContentContent | m.ToolCallContentDiff | m.ToolCallContentTerminal"
"""One entry of a tool call's ``content`` list."""


def text_content(text: str) -> m.ToolCallContentContent:
    return m.ToolCallContentContent(content=m.ContentBlockText(text=text))


def diff_content(proposal: EditProposal, path: str) -> m.ToolCallContentDiff:
    """A diff block for ``proposal``; ``path`` is its absolute path."""
    return m.ToolCallContentDiff(path=path, old_text=proposal.old_text, new_text=proposal.new_text)
