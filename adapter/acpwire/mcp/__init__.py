"""Per-session MCP servers for the ACP backend, on the official MCP Python SDK.

:class:`McpServerHost` implements :class:`acpwire.server.editor.mcp_host.McpHost`: it connects the
stdio, streamable-HTTP and SSE servers a client names in ``session/new``, ``load``,
``resume`` and ``fork``, and offers their tools to the session's agent. The MCP SDK itself
is imported only when a first server starts, so it costs nothing at start-up.
"""

from .host import McpServerHost, SessionServers
from .naming import allocate_names, sanitize
from .session import LateStart, McpSession

__all__ = [
    "LateStart",
    "McpServerHost",
    "McpSession",
    "SessionServers",
    "allocate_names",
    "sanitize",
]
