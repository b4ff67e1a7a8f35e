"""What a message needs the other side to have advertised in ``initialize``, both ways.

A client's request to an agent may need a capability of the agent's ``initialize`` answer
(``agentCapabilities``): ``session/load`` needs ``loadSession``, ``session/list`` the
``sessionCapabilities.list`` marker, an ``http`` MCP server ``mcpCapabilities.http``, an
image in a prompt ``promptCapabilities.image``... An agent's request to a client may need
one of the client's ``initialize`` params (``clientCapabilities``, read as
:class:`~acpwire.probe.signals.ClientSignals`): ``fs/*``, ``terminal/*``,
``elicitation/*``. :func:`to_agent` and :func:`to_client` say what a message lacks, on
its wire form (a JSON object), with the spec section each rule rests on.

One table for every reader: the typed runtime refuses such a call before it is sent
(``acpwire.link``'s ``CapabilityError``), and the protocol checker reports one it sees
(``acpwire.conformance``, the rule ``capability``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, Literal

from acp_v1 import methods

from .signals import ClientSignals

__all__ = [
    "TO_AGENT_CHECKED",
    "TO_CLIENT_CHECKED",
    "Unadvertised",
    "to_agent",
    "to_client",
]


@dataclass(frozen=True, slots=True)
class Unadvertised:
    """One thing a message uses that the other side's ``initialize`` did not advertise."""

    sent: str
    """What was sent: the method, or the method and what in it (``session/prompt with
    image content``)."""
    side: Literal["agent", "client"]
    """Whose ``initialize`` should have advertised it."""
    capability: str
    """Its wire path, from the top: ``agentCapabilities.loadSession``."""
    spec: str
    """The spec section the rule rests on."""

    def describe(self) -> str:
        """``session/load sent, but the agent's initialize did not advertise ...``."""
        return (
            f"{self.sent} sent, but the {self.side}'s initialize did not advertise "
            f"{self.capability}"
        )


@dataclass(frozen=True, slots=True)
class _AgentGate:
    path: tuple[str, ...]
    """Where the capability is in ``agentCapabilities``."""
    flag: bool
    """True: a boolean that must be ``true``; False: a marker object (even ``{}``)."""
    spec: str

    def granted(self, caps: object) -> bool:
        value = caps
        for key in self.path:
            value = value.get(key) if isinstance(value, Mapping) else None
        return value is True if self.flag else isinstance(value, Mapping)

    def missing(self, sent: str) -> Unadvertised:
        return Unadvertised(sent, "agent", "agentCapabilities." + ".".join(self.path), self.spec)


_SESSIONS: Final = "ACP v1 initialization § Session Capabilities"
_AUTH: Final = "ACP v1 initialization § Authentication Capabilities"
_PROVIDERS: Final = "ACP v1 initialization § Agent Capabilities"


def _marker(*path: str, spec: str = _SESSIONS) -> _AgentGate:
    return _AgentGate(path, flag=False, spec=spec)


_AGENT_METHODS: Final[Mapping[str, _AgentGate]] = {
    methods.SESSION_LOAD: _AgentGate(
        ("loadSession",), flag=True, spec="ACP v1 session-setup § Loading Sessions"
    ),
    methods.SESSION_LIST: _marker(
        "sessionCapabilities", "list", spec="ACP v1 session-list § Checking Support"
    ),
    methods.SESSION_DELETE: _marker("sessionCapabilities", "delete", spec="ACP v1 session-delete"),
    methods.SESSION_RESUME: _marker(
        "sessionCapabilities", "resume", spec="ACP v1 session-setup § Resuming Sessions"
    ),
    methods.SESSION_CLOSE: _marker(
        "sessionCapabilities", "close", spec="ACP v1 session-setup § Closing Active Sessions"
    ),
    methods.SESSION_FORK: _marker("sessionCapabilities", "fork"),
    methods.SESSION_ARCHIVE: _marker("sessionCapabilities", "archive"),
    methods.SESSION_UNARCHIVE: _marker("sessionCapabilities", "archive"),
    methods.SESSION_STATUS: _marker("sessionCapabilities", "status"),
    methods.SESSION_SET_TITLE: _marker("sessionCapabilities", "title"),
    methods.LOGOUT: _marker("auth", "logout", spec=_AUTH),
    methods.AUTH_STATUS: _marker("auth", "status", spec=_AUTH),
    methods.PROVIDERS_LIST: _marker("providers", spec=_PROVIDERS),
    methods.PROVIDERS_SET: _marker("providers", spec=_PROVIDERS),
    methods.PROVIDERS_DISABLE: _marker("providers", spec=_PROVIDERS),
}
"""Agent methods (sent by the client) that need a capability of the agent's answer; the
others are baseline or offered by session set-up."""

_SESSION_SETUP: Final = frozenset(
    {methods.SESSION_NEW, methods.SESSION_LOAD, methods.SESSION_RESUME, methods.SESSION_FORK}
)
_MCP_TRANSPORTS: Final = frozenset({"http", "sse"})
_ADDITIONAL_DIRECTORIES: Final = _marker(
    "sessionCapabilities",
    "additionalDirectories",
    spec="ACP v1 session-setup § Additional Workspace Roots",
)
_PROMPT_CONTENT: Final = {"image": "image", "audio": "audio", "resource": "embeddedContext"}
"""Prompt content types beyond text and resource links, and the capability each needs."""

TO_AGENT_CHECKED: Final = frozenset({*_AGENT_METHODS, *_SESSION_SETUP, methods.SESSION_PROMPT})
"""The methods :func:`to_agent` can find anything in (the others need no capability)."""


def to_agent(method: str, params: Mapping[str, object], agent_caps: object) -> list[Unadvertised]:
    """What the client's ``method`` with these wire ``params`` uses that
    ``agent_caps`` (the agent's ``agentCapabilities``, as it came) does not advertise."""
    found: list[Unadvertised] = []
    gate = _AGENT_METHODS.get(method)
    if gate is not None and not gate.granted(agent_caps):
        found.append(gate.missing(method))
    if method in _SESSION_SETUP:
        servers = params.get("mcpServers")
        for server in servers if isinstance(servers, list) else ():
            transport = server.get("type") if isinstance(server, Mapping) else None
            if transport not in _MCP_TRANSPORTS:
                continue
            mcp = _AgentGate(
                ("mcpCapabilities", str(transport)),
                flag=True,
                spec="ACP v1 session-setup § MCP Servers",
            )
            if not mcp.granted(agent_caps):
                found.append(mcp.missing(f"{method} with an {transport} MCP server"))
        if params.get("additionalDirectories") and not _ADDITIONAL_DIRECTORIES.granted(agent_caps):
            found.append(_ADDITIONAL_DIRECTORIES.missing(f"{method} with additionalDirectories"))
    if method == methods.SESSION_PROMPT:
        prompt = params.get("prompt")
        seen: set[str] = set()
        for block in prompt if isinstance(prompt, list) else ():
            kind = block.get("type") if isinstance(block, Mapping) else None
            capability = _PROMPT_CONTENT.get(kind) if isinstance(kind, str) else None
            if capability is None or capability in seen:
                continue
            seen.add(capability)
            content = _AgentGate(
                ("promptCapabilities", capability),
                flag=True,
                spec="ACP v1 prompt-turn § 1. User Message",
            )
            if not content.granted(agent_caps):
                found.append(content.missing(f"{method} with {kind} content"))
    return found


Granted = Callable[[ClientSignals, str | None], bool]
"""Whether the client's signals grant a method (the request's ``mode``, if any)."""

_FS: Final = "ACP v1 file-system § Checking Support"
_TERMINAL: Final = "ACP v1 terminals § Checking Support"
_ELICITATION: Final = "ACP v1 elicitation § Checking support"


def _elicitation(signals: ClientSignals, mode: str | None) -> bool:
    if mode == "form":
        return signals.elicitation_form
    if mode == "url":
        return signals.elicitation_url
    return signals.elicitation_form or signals.elicitation_url


_CLIENT_METHODS: Final[Mapping[str, tuple[str, Granted, str]]] = {
    methods.FS_READ_TEXT_FILE: ("fs.readTextFile", lambda s, _: s.fs_read, _FS),
    methods.FS_WRITE_TEXT_FILE: ("fs.writeTextFile", lambda s, _: s.fs_write, _FS),
    **{
        method: ("terminal", lambda s, _: s.terminal, _TERMINAL)
        for method in (
            methods.TERMINAL_CREATE,
            methods.TERMINAL_OUTPUT,
            methods.TERMINAL_RELEASE,
            methods.TERMINAL_WAIT_FOR_EXIT,
            methods.TERMINAL_KILL,
        )
    },
    methods.ELICITATION_CREATE: ("elicitation", _elicitation, _ELICITATION),
    methods.ELICITATION_COMPLETE: ("elicitation.url", lambda s, _: s.elicitation_url, _ELICITATION),
}
"""Client methods (sent by the agent) that need a capability of the client's
``initialize`` params, read as the capability probe reads them."""

TO_CLIENT_CHECKED: Final = frozenset(_CLIENT_METHODS)
"""The methods :func:`to_client` can find anything in."""


def to_client(
    method: str, params: Mapping[str, object], client: ClientSignals
) -> list[Unadvertised]:
    """What the agent's ``method`` with these wire ``params`` needs that the client's
    capabilities (``client``) do not grant."""
    gate = _CLIENT_METHODS.get(method)
    if gate is None:
        return []
    capability, granted, spec = gate
    mode = params.get("mode")
    if granted(client, mode if isinstance(mode, str) else None):
        return []
    return [Unadvertised(method, "client", f"clientCapabilities.{capability}", spec)]
