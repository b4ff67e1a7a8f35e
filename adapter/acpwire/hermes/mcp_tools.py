"""The editor's MCP servers as tools of the Hermes agent.

acpwire's MCP host (:mod:`acpwire.mcp.host`) connects the servers a client names in
session set-up and adds one tool per server tool to the session agent's ``tools`` (a
:class:`~acpwire.mcp.registry.ToolSink`). For a Hermes session that sink is
:class:`HermesTools`. Hermes runs every tool through one process-wide registry
(``tools.registry.registry``), by name, and passes the turn's ``task_id``, which
:class:`~acpwire.hermes.agent.HermesAgent` sets to the ACP session id. So:

* each tool name is registered once in Hermes' registry, in the toolset ``mcp-acpwire``,
  with a handler that calls the tool of the *calling* session: two sessions may offer the
  same name from different servers, and neither can reach the other's;
* the tool's definition joins only this session's ``AIAgent.tools`` and
  ``valid_tool_names`` (no other session's model sees it) and Hermes' cached system
  prompt is rebuilt;
* a name Hermes already uses for a tool of its own is refused with ``ValueError`` (the
  host logs and skips that tool).

The call itself is the MCP host's: it runs on the event loop while Hermes' worker thread
waits, bounded by the call timeout and released when the turn is interrupted.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from acpwire.agent.cancel import CancelToken
from acpwire.agent.embedded.tools.base import Tool, ToolOutcome
from acpwire.hermes.modules import hermes_module

logger = logging.getLogger(__name__)

TOOLSET = "mcp-acpwire"
"""The Hermes toolset acpwire's MCP tools are registered in (``mcp-*``: Hermes lets MCP
toolsets replace each other's tools and its own MCP code leaves them alone)."""


@runtime_checkable
class CallableTool(Tool, Protocol):
    """A tool that can also be called from any worker thread without a ``ToolContext``
    (``acpwire.mcp.tools.McpTool``)."""

    def call(self, args: dict[str, Any], cancel: CancelToken | None = None) -> ToolOutcome: ...


def _hermes_registry() -> Any:
    module = hermes_module("tools.registry")
    if module is None:
        raise ValueError("this Hermes has no tools.registry module")
    return module.registry


class _Routes:
    """Process-wide: which session offers which acpwire tool name to Hermes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owners: dict[str, dict[str, HermesTools]] = {}

    def claim(self, name: str, task_id: str, sink: HermesTools, description: str) -> None:
        with self._lock:
            owners = self._owners.get(name)
            if owners is None:
                registry = _hermes_registry()
                entry = registry.get_entry(name)
                if entry is not None and entry.toolset != TOOLSET:
                    raise ValueError(f"Hermes has a tool named {name!r} ({entry.toolset})")
                # The entry is shared by every session offering this name, whose servers
                # may differ: no parameters of its own (Hermes coerces arguments by the
                # registry's schema); each session's model sees its own schema.
                shared = {
                    "name": name,
                    "description": description,
                    "parameters": {"type": "object", "properties": {}},
                }
                registry.register(
                    name=name,
                    toolset=TOOLSET,
                    schema=shared,
                    handler=self._handler(name),
                    description=description,
                )
                owners = self._owners[name] = {}
            owners[task_id] = sink

    def release(self, name: str, task_id: str) -> None:
        with self._lock:
            owners = self._owners.get(name, {})
            owners.pop(task_id, None)
            if owners:
                return
            self._owners.pop(name, None)
            registry = _hermes_registry()
            entry = registry.get_entry(name)
            if entry is not None and entry.toolset == TOOLSET:
                registry.deregister(name)

    def _handler(self, name: str) -> Callable[..., str]:
        def handle(args: dict[str, Any], **context: Any) -> str:
            task_id = str(context.get("task_id") or "")
            with self._lock:
                sink = self._owners.get(name, {}).get(task_id)
            if sink is None:
                return json.dumps({"error": f"the tool {name!r} is not offered to this session"})
            return sink.call(name, args)

        return handle


_ROUTES = _Routes()


class HermesTools:
    """The :class:`~acpwire.mcp.registry.ToolSink` of one Hermes session.

    ``agent`` is the session's ``run_agent.AIAgent``; ``cancel`` gives the token of the
    running turn (None between turns).
    """

    def __init__(self, agent: Any, task_id: str, cancel: Callable[[], CancelToken | None]) -> None:
        self._agent = agent
        self._task_id = task_id
        self._cancel = cancel
        self._lock = threading.Lock()
        self._tools: dict[str, CallableTool] = {}

    def add(self, tool: Tool, *, replace: bool = False) -> None:
        if not isinstance(tool, CallableTool):
            raise ValueError(f"tool {tool.name!r} cannot be called from Hermes' worker threads")
        name = tool.name
        with self._lock:
            if name in self._tools and not replace:
                raise ValueError(f"a tool named {name!r} is already registered")
            if name not in self._tools and name in self._builtin_names():
                raise ValueError(f"Hermes has a tool named {name!r}")
            schema = {
                "name": name,
                "description": tool.description,
                "parameters": dict(tool.parameters),
            }
            _ROUTES.claim(name, self._task_id, self, tool.description)
            self._tools[name] = tool
            self._offer(name, {"type": "function", "function": schema})
        logger.debug("session %s: offered MCP tool %s to Hermes", self._task_id, name)

    def remove(self, name: str) -> bool:
        with self._lock:
            if self._tools.pop(name, None) is None:
                return False
            _ROUTES.release(name, self._task_id)
            self._offer(name, None)
        return True

    def tool(self, name: str) -> Tool | None:
        """This session's MCP tool of that name (the boundary runs it with the turn's
        hooks, so it is asked as the embedded agent's MCP calls are)."""
        with self._lock:
            return self._tools.get(name)

    def names(self) -> list[str]:
        """Every tool name this session's model sees (Hermes' own and the MCP ones)."""
        with self._lock:
            return sorted(self._builtin_names() | set(self._tools))

    def call(self, name: str, args: dict[str, Any]) -> str:
        """Run ``name`` for Hermes (on its worker thread); failures come back as
        ``{"error": ...}``, the form Hermes' own tools use."""
        with self._lock:
            tool = self._tools.get(name)
        if tool is None:
            return json.dumps({"error": f"the tool {name!r} is no longer offered"})
        outcome = tool.call(args, self._cancel())
        if outcome.failed and not outcome.result_text.lstrip().startswith("{"):
            return json.dumps({"error": outcome.result_text})
        return outcome.result_text

    def _builtin_names(self) -> set[str]:
        names = getattr(self._agent, "valid_tool_names", None) or set()
        return {str(n) for n in names} - set(self._tools)

    def _offer(self, name: str, definition: dict[str, Any] | None) -> None:
        """Put ``definition`` in place of ``name``'s (None: take it away) in the agent's
        tool list, then let Hermes rebuild its system prompt."""
        agent = self._agent
        kept = [t for t in (getattr(agent, "tools", None) or []) if _tool_name(t) != name]
        agent.tools = [*kept, definition] if definition is not None else kept
        valid = getattr(agent, "valid_tool_names", None)
        if not isinstance(valid, set):
            valid = agent.valid_tool_names = set(valid or ())
        (valid.add if definition is not None else valid.discard)(name)
        invalidate = getattr(agent, "_invalidate_system_prompt", None)
        if callable(invalidate):
            invalidate()


def _tool_name(definition: object) -> str:
    function = definition.get("function") if isinstance(definition, dict) else None
    return str(function.get("name", "")) if isinstance(function, dict) else ""
