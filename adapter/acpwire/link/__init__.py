"""The typed ACP runtime: an agent or a client wired to a byte stream over ``acpwire.rpc``.

- :mod:`~acpwire.link.connections`: :class:`AgentConnection`, :class:`ClientConnection`
  and :func:`spawn_agent`, the objects a user's agent or client is served by;
- :mod:`~acpwire.link.endpoint`: :class:`~acpwire.link.endpoint.AcpEndpoint`, the
  :class:`~acpwire.rpc.RpcHandler` routing each method through the generated method
  table to a typed handler, and :func:`after_answer`;
- :mod:`~acpwire.link.handlers`: what a handler object may define, checked when it is
  bound, and the extension decorators :func:`ext_method` / :func:`ext_notification`;
- :mod:`~acpwire.link.builders` and :mod:`~acpwire.link.fastpath`: the hottest
  message (a streamed text chunk) as a model built in one pass, or as bytes;
- :mod:`~acpwire.link.decoding`: the endpoint's one-pass decoder (and the non-finite
  number test the backend's early ``initialize`` answer shares);
- private: ``_child`` (an agent child process's stderr and its end).

May import: the stdlib, pydantic, anyio, ``acp_v1``, :mod:`acpwire.rpc` and (the
endpoint, for what a client's ``initialize`` advertises) :mod:`acpwire.probe`. The names
below are importable from here and load on first use, so a module of this package (the
decoder the early ``initialize`` answer uses) loads without the rest of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acpwire._exports import lazy_exports

if TYPE_CHECKING:
    from .builders import text_chunk
    from .connections import (
        AGENT_STDERR,
        AgentConnection,
        ClientConnection,
        InvalidResult,
        SpawnedAgent,
        spawn_agent,
    )
    from .endpoint import after_answer
    from .handlers import CapabilityError, HandlerError, ext_method, ext_notification

_WHERE: dict[str, str] = {
    **dict.fromkeys(
        [
            "AGENT_STDERR",
            "AgentConnection",
            "ClientConnection",
            "InvalidResult",
            "SpawnedAgent",
            "spawn_agent",
        ],
        "acpwire.link.connections",
    ),
    **dict.fromkeys(
        ["CapabilityError", "HandlerError", "ext_method", "ext_notification"],
        "acpwire.link.handlers",
    ),
    "after_answer": "acpwire.link.endpoint",
    "text_chunk": "acpwire.link.builders",
}

__all__ = [
    "AGENT_STDERR",
    "AgentConnection",
    "CapabilityError",
    "ClientConnection",
    "HandlerError",
    "InvalidResult",
    "SpawnedAgent",
    "after_answer",
    "ext_method",
    "ext_notification",
    "spawn_agent",
    "text_chunk",
]

if not TYPE_CHECKING:  # type checkers read the imports above, and know no other names
    __getattr__ = lazy_exports(__name__, _WHERE)
