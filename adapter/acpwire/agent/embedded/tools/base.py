"""The tool abstraction of the default agent: a tool, its context, its outcome, a registry.

A tool is any object with a name, a one-line description, a JSON-schema ``parameters``
object (the OpenAI ``tools`` format) and ``run(args, ctx)``. The registry is what the
chat loop offers to the model; extra tools (MCP tools named ``<server>__<tool>``) are
added at runtime with one :meth:`ToolRegistry.add_function` call.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from acpwire.agent.cancel import CancelToken
from acpwire.agent.seam import CommandPlan, PlanItem, TurnHooks
from acpwire.config.limits import ToolLimits

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What a tool hands back: the text the model sees and whether the call failed."""

    result_text: str
    failed: bool = False


def failure(message: str, **extra: object) -> ToolOutcome:
    """A failed outcome whose text is the JSON object ``{"error": message, ...}``."""
    return ToolOutcome(json.dumps({"error": message, **extra}), failed=True)


def success(payload: Mapping[str, object]) -> ToolOutcome:
    return ToolOutcome(json.dumps(payload, ensure_ascii=False))


class CommandRunner(Protocol):
    """Runs a shell command; the local subprocess runner is the default.

    Returns ``(exit_code, combined output)``. It must return promptly once ``cancel``
    fires, stopping the command. ``plan`` (when given) names the process to start (the
    sandboxed argv) and its environment.
    """

    def run(
        self,
        command: str,
        cwd: str,
        timeout: float,
        cancel: CancelToken,
        plan: CommandPlan | None = None,
    ) -> tuple[int, str]: ...


@dataclass(slots=True)
class SessionState:
    """Per-session state that outlives one turn (the todo list)."""

    todos: list[PlanItem] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Everything a tool needs for one call: the turn's cwd, hooks and cancel token."""

    call_id: str
    cwd: str
    hooks: TurnHooks
    cancel: CancelToken
    runner: CommandRunner
    state: SessionState
    limits: ToolLimits = field(default_factory=ToolLimits)
    """The size and time caps of the file and search tools (``[tools]`` in config.toml)."""


class Tool(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def parameters(self) -> Mapping[str, Any]: ...
    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome: ...


@dataclass(frozen=True, slots=True)
class FunctionTool:
    """A tool made of a plain function that takes the arguments and returns text."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    function: Callable[[dict[str, Any]], str | ToolOutcome]

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        result = self.function(args)
        return result if isinstance(result, ToolOutcome) else ToolOutcome(result)


class ToolRegistry:
    """The tools offered to the model, by name. Thread-safe."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._lock = threading.Lock()
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool, *, replace: bool = False) -> None:
        if not _NAME.match(tool.name):
            raise ValueError(f"invalid tool name {tool.name!r}: use 1-64 of [A-Za-z0-9_-]")
        if tool.parameters.get("type") != "object":
            raise ValueError(f"tool {tool.name!r}: parameters must be a JSON schema of type object")
        with self._lock:
            if tool.name in self._tools and not replace:
                raise ValueError(f"a tool named {tool.name!r} is already registered")
            self._tools[tool.name] = tool

    def add_function(
        self,
        name: str,
        description: str,
        parameters: Mapping[str, Any],
        function: Callable[[dict[str, Any]], str | ToolOutcome],
        *,
        replace: bool = False,
    ) -> None:
        """Register a plain function as a tool (how MCP tools are added)."""
        self.add(FunctionTool(name, description, parameters, function), replace=replace)

    def remove(self, name: str) -> bool:
        with self._lock:
            return self._tools.pop(name, None) is not None

    def get(self, name: str) -> Tool | None:
        with self._lock:
            return self._tools.get(name)

    def names(self) -> list[str]:
        with self._lock:
            return list(self._tools)

    def descriptions(self) -> list[tuple[str, str]]:
        with self._lock:
            return [(tool.name, tool.description) for tool in self._tools.values()]

    def specs(self) -> list[dict[str, Any]]:
        """The ``tools`` array of a chat-completions request."""
        with self._lock:
            tools = list(self._tools.values())
        return [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": dict(tool.parameters),
                },
            }
            for tool in tools
        ]


def check_arguments(tool: Tool, args: Mapping[str, Any]) -> str | None:
    """A message when required arguments are missing or unknown ones are given."""
    schema = tool.parameters
    properties = schema.get("properties")
    required = schema.get("required")
    if isinstance(required, list):
        missing = [name for name in required if name not in args]
        if missing:
            return f"missing required argument(s) for {tool.name}: {', '.join(missing)}"
    if schema.get("additionalProperties") is False and isinstance(properties, dict):
        unknown = sorted(set(args) - set(properties))
        if unknown:
            return (
                f"unknown argument(s) for {tool.name}: {', '.join(unknown)}"
                f" (accepted: {', '.join(properties)})"
            )
    return None
