"""Per-session MCP servers for the ACP backend, on the official MCP Python SDK.

:class:`McpServerHost` implements :class:`acpwire.server.mcp.McpHost`: it connects the
stdio, streamable-HTTP and SSE servers a client names in ``session/new``, ``load``,
``resume`` and ``fork``, and offers their tools to the session's agent.
"""

from .host import McpServerHost, SessionServers
from .naming import allocate_names, sanitize
from .tools import HasToolRegistry, McpTool, ToolSink

__all__ = [
    "HasToolRegistry",
    "McpServerHost",
    "McpTool",
    "SessionServers",
    "ToolSink",
    "allocate_names",
    "sanitize",
]
