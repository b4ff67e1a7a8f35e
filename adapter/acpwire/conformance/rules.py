"""The rules the protocol checker applies, each with the spec section it rests on.

Sections name the JSON-RPC 2.0 specification (jsonrpc.org/specification) or a page of
the ACP v1 documentation (``docs/protocol/v1/<page>.mdx`` in the spec repository,
agentclientprotocol.com/protocol/v1/<page>) and its heading. A rule that checks more than
one thing (the envelope, capabilities) cites the section of each finding on the finding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["RULES", "Level", "Rule"]

Level = Literal["violation", "info"]


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    level: Level
    spec: str
    """The section a finding of this rule cites unless it names a more precise one."""
    summary: str


_ALL: Final = (
    Rule(
        "not-json",
        "violation",
        "ACP v1 transports § stdio",
        "a line that is not JSON: stdout and stdin carry only ACP messages, one a line",
    ),
    Rule(
        "envelope",
        "violation",
        "JSON-RPC 2.0 § 4 Request object",
        'not a JSON-RPC 2.0 message: `jsonrpc` is not "2.0", a request without a string '
        "method or with an id that is not a string or an integer, a response without "
        "exactly one of `result` / `error`, an error without an integer `code` and a "
        "string `message`, params that are not structured, a batch",
    ),
    Rule(
        "direction",
        "violation",
        "ACP v1 overview § Communication Model",
        "a method the agent handles sent by the agent, or one the client handles sent by "
        "the client",
    ),
    Rule(
        "method-kind",
        "violation",
        "ACP v1 overview § Message Flow",
        "a notification method sent as a request (with an id), or a request method "
        "sent as a notification",
    ),
    Rule(
        "params",
        "violation",
        "ACP v1 schema",
        "a request's or notification's params do not validate against the method's params type",
    ),
    Rule(
        "result",
        "violation",
        "ACP v1 schema",
        "a response's result does not validate against the result type of the request it answers",
    ),
    Rule(
        "unknown-id",
        "violation",
        "JSON-RPC 2.0 § 5 Response object",
        "a response whose id matches no request the other side sent",
    ),
    Rule(
        "duplicate-answer",
        "violation",
        "JSON-RPC 2.0 § 5 Response object",
        "a second response to a request already answered",
    ),
    Rule(
        "unanswered",
        "violation",
        "JSON-RPC 2.0 § 5 Response object",
        "a request never answered before the run ended",
    ),
    Rule(
        "unknown-session",
        "violation",
        "ACP v1 session-setup § Session ID",
        "an agent message for a session id the client was never given (by a session/new "
        "or session/fork result, or a session/load, session/resume or session/fork "
        "request)",
    ),
    Rule(
        "update-after-turn",
        "violation",
        "ACP v1 prompt-turn § 4. Check for Completion",
        "turn output (a message or thought chunk, a tool call or its update, a plan) for "
        "a session whose session/prompt was answered, before the next prompt",
    ),
    Rule(
        "unknown-tool-call",
        "violation",
        "ACP v1 tool-calls § Updating",
        "a tool_call_update for a toolCallId no tool_call of that session announced",
    ),
    Rule(
        "unoffered-option",
        "violation",
        "ACP v1 tool-calls § Permission Options",
        "a session/request_permission answer selecting an optionId that was not offered",
    ),
    Rule(
        "capability",
        "violation",
        "ACP v1 initialization § Capabilities",
        "a method, content type or transport used although the other side's initialize "
        "did not advertise it",
    ),
    Rule(
        "unknown-method",
        "info",
        "ACP v1 extensibility § Extension Methods",
        "a method these bindings do not know (a newer protocol version, or a typo)",
    ),
    Rule(
        "extension-method",
        "info",
        "ACP v1 extensibility § Extension Methods",
        "a `_`-prefixed extension method: not checked",
    ),
)

RULES: Final[dict[str, Rule]] = {rule.name: rule for rule in _ALL}
"""Every rule by name, in the order docs/TAP.md lists them."""
