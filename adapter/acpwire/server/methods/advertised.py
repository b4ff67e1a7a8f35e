"""What ``initialize`` advertises: capabilities, the agent served, authentication methods.

Capabilities are advertised from what is implemented, nothing more: session load, list,
resume, close and delete; fork only on connections that opted into unstable methods;
images and embedded context in prompts (not audio); stdio MCP servers (which every
agent must accept) and the HTTP/SSE transports the MCP layer implements.

Everything here is synchronous and needs no event loop: :func:`greet` is the whole
answer to an ``initialize``, used by the connection's front desk and by the ``acpwire``
command's answer before the loop starts (:mod:`~acpwire.server.process.first_answer`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final

from acp_v1 import models as m
from acp_v1.methods import PROTOCOL_VERSION
from acpwire._version import __version__
from acpwire.agent.extras import SetupMethod
from acpwire.attachments.capabilities import PROMPT_CAPABILITIES
from acpwire.probe import ConnectionProbe, negotiate as probe_negotiate

if TYPE_CHECKING:
    from acpwire.agent.factory import AgentFactory

__all__ = [
    "ACPWIRE_SETUP",
    "DEFAULT_MCP_TRANSPORTS",
    "SETUP_METHOD_ID",
    "agent_capabilities",
    "agent_info",
    "auth_methods",
    "greet",
    "initialize_response",
    "negotiate",
    "setup_method_of",
]

logger = logging.getLogger(__name__)

DEFAULT_MCP_TRANSPORTS: Final = {"http": True, "sse": True}
"""What ``acpwire.mcp.McpServerHost`` connects besides stdio (a test keeps them equal)."""

SETUP_METHOD_ID = "acpwire-setup"


def setup_method_of(factory: object) -> SetupMethod | None:
    method = getattr(factory, "setup_method", None)
    return method if isinstance(method, SetupMethod) else None


def agent_info(factory: object) -> m.Implementation:
    """acpwire, naming the agent it serves and that agent's version when the factory
    tells them (``factory.agent_identity``: ``(name, version)``, Hermes')."""
    identity = getattr(factory, "agent_identity", None)
    served = identity() if callable(identity) else None
    if not served:
        return m.Implementation(name="acpwire", title="acpwire", version=__version__)
    name, version = served
    return m.Implementation(
        name="acpwire",
        title=f"acpwire {__version__} serving {name} {version}",
        version=__version__,
        meta={"agent": {"name": name, "version": version}},
    )


def negotiate(requested: object) -> int:
    """The version to answer: the client's when we speak it, else the latest we speak
    (a client that cannot speak it closes the connection, as the protocol says)."""
    return probe_negotiate(requested, (PROTOCOL_VERSION,))


def agent_capabilities(*, unstable: bool, mcp_http: bool, mcp_sse: bool) -> m.AgentCapabilities:
    sessions = m.SessionCapabilities(
        list=m.SessionListCapabilities(),
        resume=m.SessionResumeCapabilities(),
        close=m.SessionCloseCapabilities(),
        delete=m.SessionDeleteCapabilities(),
        fork=m.SessionForkCapabilities() if unstable else None,
    )
    return m.AgentCapabilities(
        load_session=True,
        prompt_capabilities=m.PromptCapabilities(
            image=PROMPT_CAPABILITIES["image"],
            audio=PROMPT_CAPABILITIES["audio"],
            embedded_context=PROMPT_CAPABILITIES["embeddedContext"],
        ),
        # `acp` (MCP over ACP) is unstable-only: left out rather than sent as false.
        mcp_capabilities=m.McpCapabilities(http=mcp_http, sse=mcp_sse, acp=None),
        session_capabilities=sessions,
        auth=m.AgentAuthCapabilities(logout=m.LogoutCapabilities()),
    )


ACPWIRE_SETUP = SetupMethod(
    SETUP_METHOD_ID,
    "Configure acpwire",
    "Configure the model provider (endpoint, key, model) for acpwire.",
    ["--setup"],
    "acpwire --setup",
)


def auth_methods(
    *, terminal_auth: bool, provider: str | None, setup: SetupMethod | None = None
) -> list[m.AuthMethod]:
    """The setup method (acpwire's, or the factory's own ``setup``; a terminal method
    when the client can run one) and, when a provider is configured, a method that
    confirms its credentials."""
    methods: list[m.AuthMethod] = []
    setup = setup or ACPWIRE_SETUP
    if terminal_auth:
        methods.append(
            m.AuthMethodTerminal(
                id=setup.id, name=setup.name, description=setup.description, args=setup.args
            )
        )
    else:
        methods.append(
            m.AuthMethodAgent(
                id=setup.id,
                name=setup.name,
                description=f"{setup.description} Run `{setup.command}` in a terminal.",
            )
        )
    if provider:
        methods.append(
            m.AuthMethodAgent(
                id=provider,
                name=f"{provider} credentials",
                description="Use the configured provider.",
            )
        )
    return methods


def greet(
    params: m.InitializeRequest,
    factory: AgentFactory,
    *,
    provider: str | None,
    unstable: bool,
    mcp_http: bool,
    mcp_sse: bool,
) -> tuple[ConnectionProbe, m.InitializeResponse]:
    """Probe the client and build the answer to its ``initialize``. ``provider``: the
    factory's :meth:`~acpwire.agent.factory.AgentFactory.provider_hint` (configuration
    only: a model look-up runs after the answer)."""
    probe = ConnectionProbe.from_initialize(params, unstable_opt_in=unstable)
    # The decisions about updates and permission options are logged at the first
    # session: reading them loads models that answering initialize does not need.
    logger.info("client %s: %s", probe.client_name or "(unnamed)", probe.describe(sessions=False))
    response = initialize_response(
        probe,
        unstable=unstable,
        provider=provider,
        mcp_http=mcp_http,
        mcp_sse=mcp_sse,
        factory=factory,
    )
    return probe, response


def initialize_response(
    probe: ConnectionProbe,
    *,
    unstable: bool,
    provider: str | None,
    mcp_http: bool,
    mcp_sse: bool,
    factory: object = None,
) -> m.InitializeResponse:
    """The answer, from the probe's decisions (version, whether a terminal method fits)
    and what the factory says of itself (the agent served, its set-up)."""
    return m.InitializeResponse(
        protocol_version=probe.protocol_version,
        agent_info=agent_info(factory),
        agent_capabilities=agent_capabilities(
            unstable=unstable, mcp_http=mcp_http, mcp_sse=mcp_sse
        ),
        auth_methods=auth_methods(
            terminal_auth=probe.can_offer_terminal_auth,
            provider=provider,
            setup=setup_method_of(factory),
        ),
    )
