"""``initialize``, ``authenticate`` and ``logout``: how a client is greeted and how it gets
past "no model provider configured".

What ``initialize`` advertises is built in :mod:`~.advertised` (synchronously: the
``acpwire`` command can answer before the event loop starts); here the connection's
answer and the authentication checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from acp_v1 import models as m
from acpwire.agent.extras import SetupMethod
from acpwire.probe import ConnectionProbe
from acpwire.rpc import auth_required, invalid_params
from acpwire.server.methods.advertised import ACPWIRE_SETUP, greet

if TYPE_CHECKING:
    from acpwire.agent.factory import AgentFactory

__all__ = ["DEFAULT_SETUP_HINT", "answer_initialize", "check_auth_method", "no_provider_message"]


async def answer_initialize(
    params: m.InitializeRequest,
    factory: AgentFactory,
    *,
    unstable: bool,
    mcp_http: bool,
    mcp_sse: bool,
) -> tuple[ConnectionProbe, m.InitializeResponse]:
    """Probe the client and build the answer (the front desk answers the first
    ``initialize``; the backend answers any later one). The provider is read in a
    thread: a factory's configuration may be on disk."""
    provider = await anyio.to_thread.run_sync(factory.provider_hint)
    return greet(
        params, factory, provider=provider, unstable=unstable, mcp_http=mcp_http, mcp_sse=mcp_sse
    )


def check_auth_method(
    method_id: str,
    *,
    provider: str | None,
    configured: bool,
    problem: str | None,
    hint: str = "",
    setup: SetupMethod | None = None,
) -> None:
    """Accept a known method when a provider is usable; otherwise say exactly what is wrong."""
    known = {(setup or ACPWIRE_SETUP).id} | ({provider} if provider else set())
    if method_id.lower() not in {k.lower() for k in known}:
        raise invalid_params(
            f"unknown authentication method {method_id!r}; known: {', '.join(sorted(known))}"
        )
    if not configured:
        raise auth_required(no_provider_message(problem, hint or DEFAULT_SETUP_HINT))


DEFAULT_SETUP_HINT = "Run `acpwire --setup`, or set OPENAI_BASE_URL and ACPWIRE_MODEL."


def no_provider_message(problem: str | None, hint: str = DEFAULT_SETUP_HINT) -> str:
    """What the editor shows when no model can be used: the reason and how to fix it
    (``hint`` comes from the agent factory: the default agent and Hermes differ)."""
    detail = f" ({problem})" if problem else ""
    return f"No model provider configured{detail}. {hint}"
