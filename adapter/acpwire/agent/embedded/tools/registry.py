"""The registry of built-in tools a default agent starts with."""

from __future__ import annotations

from acpwire.agent.embedded.tools.base import ToolRegistry
from acpwire.agent.embedded.tools.edits.patch import PatchTool
from acpwire.agent.embedded.tools.files import ReadFileTool, WriteFileTool
from acpwire.agent.embedded.tools.search import SearchFilesTool
from acpwire.agent.embedded.tools.terminal import TerminalTool
from acpwire.agent.embedded.tools.todo import TodoTool

__all__ = ["default_tools"]


def default_tools() -> ToolRegistry:
    """A fresh registry with the built-in tools."""
    return ToolRegistry(
        [
            ReadFileTool(),
            WriteFileTool(),
            PatchTool(),
            SearchFilesTool(),
            TerminalTool(),
            TodoTool(),
        ]
    )
