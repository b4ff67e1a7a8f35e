"""The default agent's built-in tools (Hermes names and arguments) and their registry.

The names below load their module on first access: code that needs one tool module
(the sandbox planner needs :mod:`.danger`) does not load every tool with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acpwire._exports import lazy_exports

if TYPE_CHECKING:
    from acpwire.agent.embedded.tools.args import ToolArgError
    from acpwire.agent.embedded.tools.base import (
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
    from acpwire.agent.embedded.tools.danger import dangerous_reason
    from acpwire.agent.embedded.tools.edits.fuzzy import PatchError, fuzzy_replace
    from acpwire.agent.embedded.tools.registry import default_tools
    from acpwire.agent.embedded.tools.terminal import LocalRunner

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

_WHERE = {
    **dict.fromkeys(__all__, "acpwire.agent.embedded.tools.base"),  # the rest: their own modules
    "ToolArgError": "acpwire.agent.embedded.tools.args",
    "dangerous_reason": "acpwire.agent.embedded.tools.danger",
    "PatchError": "acpwire.agent.embedded.tools.edits.fuzzy",
    "fuzzy_replace": "acpwire.agent.embedded.tools.edits.fuzzy",
    "default_tools": "acpwire.agent.embedded.tools.registry",
    "LocalRunner": "acpwire.agent.embedded.tools.terminal",
}

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__ = lazy_exports(__name__, _WHERE)
