"""The checks of a conformance run, their options and their results (the data; the run
is :mod:`.run`, the checks' bodies :mod:`._checks`)."""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from acp_v1 import models as _models

__all__ = [
    "BY_NAME",
    "CHECKS",
    "NEWER_VERSION",
    "OLDER_VERSION",
    "REFUSAL",
    "STOP_REASONS",
    "AgentStartError",
    "Check",
    "CheckResult",
    "RunOptions",
    "RunReport",
    "Status",
]

Status = Literal["PASS", "FAIL", "SKIP"]

STOP_REASONS: Final = frozenset(typing.get_args(_models.KnownStopReason.__value__))
"""The stop reasons of the protocol (the bindings' known values)."""

_INIT: Final = "ACP v1 initialization"
_SETUP: Final = "ACP v1 session-setup"
_TURN: Final = "ACP v1 prompt-turn"
_TOOLS: Final = "ACP v1 tool-calls"
_RPC: Final = "JSON-RPC 2.0 § 5.1 Error object"
NEWER_VERSION: Final = 1000
"""The protocol version the newer-version probe asks for: no agent supports it."""
OLDER_VERSION: Final = 0
REFUSAL: Final = {"code": -32603, "message": "Refused by the client (acpwire check)"}
"""The client's error answer when it refuses an fs or terminal request."""


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    what: str
    spec: str
    needs_model: bool = False


CHECKS: Final[tuple[Check, ...]] = (
    Check(
        "initialize",
        "initialize with protocolVersion 1 is answered with version 1 and well-formed "
        "agentCapabilities, agentInfo and authMethods",
        f"{_INIT} § Protocol version, § Capabilities",
    ),
    Check(
        "protocol-version-newer",
        f"a client asking for protocolVersion {NEWER_VERSION} (newer than any) gets a result "
        "naming the agent's latest version, not an error and not the version asked for",
        f"{_INIT} § Protocol version",
    ),
    Check(
        "protocol-version-older",
        f"a client asking for protocolVersion {OLDER_VERSION} (older than v1) gets a result "
        "naming a version (the agent's latest when it does not support the one asked for), "
        "not an error",
        f"{_INIT} § Protocol version",
    ),
    Check(
        "session-new",
        "session/new with a real temporary cwd and no MCP servers answers a sessionId (and "
        "well-formed modes and configOptions); no update for the session before the answer",
        f"{_SETUP} § Creating a Session",
    ),
    Check(
        "session-set-mode",
        "where session/new returned modes: session/set_mode to another available mode "
        "(in a session of its own) is answered",
        "ACP v1 session-modes",
    ),
    Check(
        "session-set-config-option",
        "where session/new returned configOptions: session/set_config_option (another value "
        "of the first option, in a session of its own) answers the options",
        "ACP v1 session-config-options",
    ),
    Check(
        "prompt",
        "a prompt turn: every update well typed, the answer a valid stop reason",
        f"{_TURN} § 3. Agent Reports Output, § 4. Check for Completion",
        needs_model=True,
    ),
    Check(
        "prompt-resource-link",
        "a prompt of a text block and a resource_link (a file of the cwd) is taken like any "
        "other: every agent must accept both kinds of content",
        f"{_INIT} § Prompt Capabilities; {_TURN} § 1. User Message",
        needs_model=True,
    ),
    Check(
        "permission-allow",
        "a turn whose tool call (a file write in the cwd) asks permission, answered with an "
        "allow option: the request well formed, the tool call and its updates consistent, "
        "the turn ends with a valid stop reason",
        f"{_TOOLS} § Requesting Permission, § Permission Options",
        needs_model=True,
    ),
    Check(
        "permission-reject",
        "the same, answered with a reject option: the turn ends with a valid stop reason "
        "and the file is not written",
        f"{_TOOLS} § Requesting Permission, § Permission Options",
        needs_model=True,
    ),
    Check(
        "cancel",
        "session/cancel during a streaming turn: the prompt is answered with stopReason "
        "cancelled, no turn output after it",
        f"{_TURN} § Cancellation",
        needs_model=True,
    ),
    Check(
        "fs-refused",
        "with fs offered, the client refuses the agent's fs/* request (an error answer): "
        "the turn still ends with a valid stop reason and the agent goes on serving",
        "ACP v1 file-system; JSON-RPC 2.0 § 5 Response object",
        needs_model=True,
    ),
    Check(
        "terminal-refused",
        "with terminal offered, the client refuses terminal/create: the turn still ends "
        "with a valid stop reason and the agent goes on serving",
        "ACP v1 terminals; JSON-RPC 2.0 § 5 Response object",
        needs_model=True,
    ),
    Check(
        "session-load",
        "where loadSession is advertised: session/load of the run's session replays its "
        "conversation as session/update before the answer, nothing of it after",
        f"{_SETUP} § Loading Sessions",
    ),
    Check(
        "session-resume",
        "where sessionCapabilities.resume is advertised: session/resume is answered",
        f"{_SETUP} § Resuming Sessions",
    ),
    Check(
        "session-fork",
        "where sessionCapabilities.fork is advertised: session/fork answers a new sessionId",
        "ACP v1 schema § ForkSessionRequest (unstable)",
    ),
    Check(
        "session-list",
        "where sessionCapabilities.list is advertised: session/list is answered",
        "ACP v1 session-list",
    ),
    Check(
        "session-close",
        "where sessionCapabilities.close is advertised: session/close is answered",
        f"{_SETUP} § Closing Active Sessions",
    ),
    Check(
        "malformed-json",
        "a line that is not JSON is answered with error -32700 and id null; the agent still serves",
        f"{_RPC}; JSON-RPC 2.0 § 5 Response object",
    ),
    Check(
        "unknown-method",
        "a request for a method no one defines is answered with error -32601; the agent "
        "still serves",
        f"{_RPC}; ACP v1 extensibility § Extension Methods",
    ),
    Check(
        "invalid-params",
        "session/new with params that do not validate (cwd a number) is answered with "
        "error -32602; the agent still serves",
        f"{_RPC}; ACP v1 schema § NewSessionRequest",
    ),
    Check(
        "end-of-input",
        "when the client closes the agent's stdin, the agent exits within the bound",
        "ACP v1 transports § stdio",
    ),
)
"""Every check, in the order a run makes them."""

BY_NAME: Final = {check.name: check for check in CHECKS}
ALWAYS: Final = frozenset({"initialize", "session-new"})
"""Checks whose work later checks need: made even when not selected (not reported)."""


@dataclass(slots=True)
class CheckResult:
    name: str
    status: Status
    evidence: str
    spec: str
    seconds: float = 0.0

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "status": self.status,
            "evidence": self.evidence,
            "spec": self.spec,
            "seconds": round(self.seconds, 3),
        }


@dataclass(slots=True)
class RunReport:
    agent: dict[str, object]
    """The command, and what its initialize answer said (name, version, capabilities)."""
    checks: list[CheckResult]
    seconds: float
    model: str | None
    """The loopback model's base URL, or None for a model-free run."""

    def count(self, status: Status) -> int:
        return sum(1 for check in self.checks if check.status == status)

    @property
    def ok(self) -> bool:
        return self.count("FAIL") == 0

    @property
    def summary(self) -> dict[str, object]:
        return {
            "pass": self.count("PASS"),
            "fail": self.count("FAIL"),
            "skip": self.count("SKIP"),
            "seconds": round(self.seconds, 2),
            "model": self.model,
        }

    def to_json(self) -> dict[str, object]:
        return {
            "checks": [check.to_json() for check in self.checks],
            "agent": self.agent,
            "summary": self.summary,
        }


class AgentStartError(OSError):
    """The agent's command cannot be started."""


@dataclass(frozen=True, slots=True)
class RunOptions:
    command: Sequence[str]
    """The agent's argv."""
    only: frozenset[str] | None = None
    """Run only these checks (names of :data:`CHECKS`); None: all."""
    skip: frozenset[str] = frozenset()
    timeout: float = 15.0
    """Seconds any one answer (a turn's included) may take."""
    exit_timeout: float = 5.0
    """Seconds the agent has to exit once its stdin is closed."""
    agent_env: Mapping[str, str] = field(default_factory=dict)
    """Variables added to the agent's environment (which is this process's otherwise).
    ``{base_url}``, ``{api_key}``, ``{model}`` (the loopback model) and ``{tmp}`` (a
    scratch folder of the run) are replaced in the values; a value naming ``{base_url}``
    starts the model."""
    model_endpoint: bool = False
    """Start the loopback model and give it as ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``."""
    hermes_home: bool = False
    """Start the loopback model and give it to Hermes: a scratch ``HERMES_HOME`` whose
    ``config.yaml`` names it as the custom provider."""
    model_name: str = "acpwire-check-model"
    write_tool: str | None = None
    """The agent's file-writing tool, when its name is not a usual one."""
    shell_tool: str | None = None
    trace: str | None = None
    """Write every line either side wrote here (JSON Lines)."""
    agent_log: str | None = None
    """Write the agent's stderr here (every process of the run)."""
    cwd: str | None = None
    """The agent process's working directory (default: this process's)."""
    progress: Callable[[CheckResult], None] | None = None
    """Told each result as its check ends (the command's progress lines)."""

    @property
    def wants_model(self) -> bool:
        return (
            self.model_endpoint
            or self.hermes_home
            or any("{base_url}" in value for value in self.agent_env.values())
        )

    def selected(self, name: str) -> bool:
        return (self.only is None or name in self.only) and name not in self.skip
