"""The default agent's built-in tools (Hermes names and arguments) and their registry."""

from __future__ import annotations

from acpwire.agent.tools.args import ToolArgError
from acpwire.agent.tools.base import (
    CommandRunner,
    FunctionTool,
    SessionState,
    Tool,
    ToolContext,
    ToolOutcome,
    ToolRegistry,
    check_arguments,
    failure,
)
from acpwire.agent.tools.danger import dangerous_reason
from acpwire.agent.tools.files import ReadFileTool, WriteFileTool
from acpwire.agent.tools.fuzzy import PatchError, fuzzy_replace
from acpwire.agent.tools.patch import PatchTool
from acpwire.agent.tools.search import SearchFilesTool
from acpwire.agent.tools.terminal import LocalRunner, TerminalTool
from acpwire.agent.tools.todo import TodoTool


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


__all__ = [
    "CommandRunner",
    "FunctionTool",
    "LocalRunner",
    "PatchError",
    "SessionState",
    "Tool",
    "ToolArgError",
    "ToolContext",
    "ToolOutcome",
    "ToolRegistry",
    "check_arguments",
    "dangerous_reason",
    "default_tools",
    "failure",
    "fuzzy_replace",
]
