"""acpwire: serve a synchronous, tool-using Python agent to editors over the Agent Client Protocol.

The public names are importable from here and load on first use (``import acpwire`` stays
cheap; the backend's modules load only when a backend name is asked for):

- serving your own agent in the full backend: :func:`serve`, :func:`run_stdio`,
  :class:`BaseAgent`, :class:`BaseAgentFactory`, :class:`SessionContext` and the seam's
  types (``acpwire.agent.seam``);
- the typed ACP runtime (core install, ``acpwire.link``): :class:`AgentConnection`,
  :class:`ClientConnection`, :func:`spawn_agent`, :class:`InvalidResult`,
  :func:`after_answer`, the extension decorators :func:`ext_method` /
  :func:`ext_notification` and :class:`HandlerError`, :func:`text_chunk`; the transports
  and error helpers of ``acpwire.rpc``.

A guide with runnable examples: docs/LIBRARY.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acpwire._exports import lazy_exports
from acpwire._version import __version__

if TYPE_CHECKING:
    from acpwire.agent.base import BaseAgent
    from acpwire.agent.factory import AgentFactory, BaseAgentFactory, SessionContext
    from acpwire.agent.seam import (
        CommandProposal,
        EditorRefused,
        EditProposal,
        Message,
        PlanItem,
        SyncAgent,
        ToolEnd,
        ToolStart,
        TurnHooks,
        TurnResult,
        TurnUsage,
    )
    from acpwire.link.builders import text_chunk
    from acpwire.link.connections import (
        AgentConnection,
        ClientConnection,
        InvalidResult,
        SpawnedAgent,
        spawn_agent,
    )
    from acpwire.link.endpoint import after_answer
    from acpwire.link.handlers import CapabilityError, HandlerError, ext_method, ext_notification
    from acpwire.rpc import (
        ConnectionClosedError,
        RpcError,
        auth_required,
        internal_error,
        invalid_params,
        invalid_request,
        memory_pair,
        method_not_found,
        resource_not_found,
        stdio_streams,
    )
    from acpwire.server.process.choice import AgentSpecError
    from acpwire.server.stdio import run_stdio, serve

_WHERE: dict[str, str] = {
    **dict.fromkeys(["BaseAgent"], "acpwire.agent.base"),
    **dict.fromkeys(
        ["AgentFactory", "BaseAgentFactory", "SessionContext"], "acpwire.agent.factory"
    ),
    **dict.fromkeys(
        [
            "CommandProposal",
            "EditProposal",
            "EditorRefused",
            "Message",
            "PlanItem",
            "SyncAgent",
            "ToolEnd",
            "ToolStart",
            "TurnHooks",
            "TurnResult",
            "TurnUsage",
        ],
        "acpwire.agent.seam",
    ),
    **dict.fromkeys(
        ["AgentConnection", "ClientConnection", "InvalidResult", "SpawnedAgent", "spawn_agent"],
        "acpwire.link.connections",
    ),
    **dict.fromkeys(
        ["CapabilityError", "HandlerError", "ext_method", "ext_notification"],
        "acpwire.link.handlers",
    ),
    **dict.fromkeys(
        [
            "ConnectionClosedError",
            "RpcError",
            "auth_required",
            "internal_error",
            "invalid_params",
            "invalid_request",
            "memory_pair",
            "method_not_found",
            "resource_not_found",
            "stdio_streams",
        ],
        "acpwire.rpc",
    ),
    "AgentSpecError": "acpwire.server.process.choice",
    "text_chunk": "acpwire.link.builders",
    "after_answer": "acpwire.link.endpoint",
    **dict.fromkeys(["run_stdio", "serve"], "acpwire.server.stdio"),
}

__all__ = [
    "AgentConnection",
    "AgentFactory",
    "AgentSpecError",
    "BaseAgent",
    "BaseAgentFactory",
    "CapabilityError",
    "ClientConnection",
    "CommandProposal",
    "ConnectionClosedError",
    "EditProposal",
    "EditorRefused",
    "HandlerError",
    "InvalidResult",
    "Message",
    "PlanItem",
    "RpcError",
    "SessionContext",
    "SpawnedAgent",
    "SyncAgent",
    "ToolEnd",
    "ToolStart",
    "TurnHooks",
    "TurnResult",
    "TurnUsage",
    "__version__",
    "after_answer",
    "auth_required",
    "ext_method",
    "ext_notification",
    "internal_error",
    "invalid_params",
    "invalid_request",
    "memory_pair",
    "method_not_found",
    "resource_not_found",
    "run_stdio",
    "serve",
    "spawn_agent",
    "stdio_streams",
    "text_chunk",
]


if not TYPE_CHECKING:  # type checkers read the imports above, and know no other names
    __getattr__ = lazy_exports(__name__, _WHERE)
