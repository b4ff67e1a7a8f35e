"""The default agent's built-in tools (Hermes names and arguments) and their registry.

The names below load their module on first access: code that needs one tool module
(the sandbox planner needs :mod:`.danger`) does not load every tool with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from acpwire.agent.tools.fuzzy import PatchError, fuzzy_replace
    from acpwire.agent.tools.registry import default_tools
    from acpwire.agent.tools.terminal import LocalRunner

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

_HOMES = {
    "ToolArgError": "args",
    "dangerous_reason": "danger",
    "PatchError": "fuzzy",
    "fuzzy_replace": "fuzzy",
    "default_tools": "registry",
    "LocalRunner": "terminal",
}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{_HOMES.get(name, 'base')}")
    return getattr(module, name)
