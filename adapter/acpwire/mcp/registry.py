"""Which agents can take MCP tools: the runtime-checkable view of a tool registry.

Kept apart from the MCP SDK so the check costs no import: an agent without a registry
never loads the SDK for the servers it cannot use. The embedded agent's registry and the
Hermes agent's (:class:`acpwire.hermes.mcp_tools.HermesTools`) both qualify.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # the tools package (and its patterns) loads with the first agent
    from acpwire.agent.embedded.tools.base import Tool


@runtime_checkable
class ToolSink(Protocol):
    """The part of :class:`acpwire.agent.embedded.tools.base.ToolRegistry` the MCP host uses."""

    def add(self, tool: Tool, *, replace: bool = False) -> None: ...
    def remove(self, name: str) -> bool: ...
    def names(self) -> list[str]: ...


@runtime_checkable
class HasToolRegistry(Protocol):
    """An agent whose tools can be extended at runtime (``DefaultAgent``, ``HermesAgent``)."""

    @property
    def tools(self) -> ToolSink: ...


def registry_of(agent: object) -> ToolSink | None:
    """The agent's tool registry, or None when MCP tools cannot be offered to it."""
    if isinstance(agent, HasToolRegistry) and isinstance(agent.tools, ToolSink):
        return agent.tools
    return None
