"""The registry of built-in tools a default agent starts with."""

from __future__ import annotations

from acpwire.agent.tools.base import ToolRegistry
from acpwire.agent.tools.files import ReadFileTool, WriteFileTool
from acpwire.agent.tools.patch import PatchTool
from acpwire.agent.tools.search import SearchFilesTool
from acpwire.agent.tools.terminal import TerminalTool
from acpwire.agent.tools.todo import TodoTool

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
