"""Which client capability each gated ``session/update`` variant and client method needs.

The bindings say what *exists*; they do not say what a client can take. These tables do,
from the spec (``acp-spec-and-sdk.md`` §1.3 to §1.5) and the vendored schemas:

* the 11 variants of stable v1 (schema-v1.19.0 onwards) are the baseline every v1 client
  parses;
* newer variants need a client capability: ``notice`` needs ``session.notices`` and the
  ``compaction_*`` pair needs ``session.compaction`` (stable in the TS SDK 2.4.0 schema);
* unstable-only variants need their unstable capability *and* an explicit opt-in by the
  agent, because strict clients drop a whole notification over one unknown tag;
* a variant in none of these tables (bindings newer than this code) is never sent.

A test checks the stability claims against the vendored ``schema.json`` files.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from .signals import ClientSignals

BASELINE_UPDATES: Final = frozenset(
    {
        "user_message_chunk",
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
        "plan",
        "available_commands_update",
        "current_mode_update",
        "config_option_update",
        "session_info_update",
        "usage_update",
    }
)


@dataclass(frozen=True, slots=True)
class UpdateGate:
    """The client capability a non-baseline variant needs, and whether it is unstable."""

    capability: str
    """Wire path of the capability, for logs and docs."""
    granted: Callable[[ClientSignals], bool]
    unstable: bool


GATED_UPDATES: Final[Mapping[str, UpdateGate]] = {
    "notice": UpdateGate("session.notices", lambda s: s.notices, unstable=False),
    "compaction_update": UpdateGate("session.compaction", lambda s: s.compaction, unstable=False),
    "compaction_summary_chunk": UpdateGate(
        "session.compaction", lambda s: s.compaction, unstable=False
    ),
    "plan_update": UpdateGate("plan", lambda s: s.plan, unstable=True),
    "plan_removed": UpdateGate("plan", lambda s: s.plan, unstable=True),
    "subagent_update": UpdateGate("subagents", lambda s: s.subagents, unstable=True),
    "session_message": UpdateGate("subagents", lambda s: s.subagents, unstable=True),
    "session_message_chunk": UpdateGate("subagents", lambda s: s.subagents, unstable=True),
}


def update_allowed(tag: str, signals: ClientSignals, *, unstable_opt_in: bool) -> bool:
    """Whether a client with these capabilities can take a variant (bindings aside)."""
    if tag in BASELINE_UPDATES:
        return True
    gate = GATED_UPDATES.get(tag)
    if gate is None:
        return False
    if gate.unstable and not unstable_opt_in:
        return False
    return gate.granted(signals)


#: Stable client-side methods the agent may always send (baseline of the protocol).
UNGATED_CLIENT_METHODS: Final = frozenset(
    {"session/update", "session/request_permission", "$/cancel_request"}
)

#: Stable client-side methods that need an advertised capability. A client method in
#: neither table is never sent: an unadvertised request can hang a client for good.
GATED_CLIENT_METHODS: Final[Mapping[str, Callable[[ClientSignals], bool]]] = {
    "fs/read_text_file": lambda s: s.fs_read,
    "fs/write_text_file": lambda s: s.fs_write,
    "terminal/create": lambda s: s.terminal,
    "terminal/output": lambda s: s.terminal,
    "terminal/release": lambda s: s.terminal,
    "terminal/wait_for_exit": lambda s: s.terminal,
    "terminal/kill": lambda s: s.terminal,
    "elicitation/create": lambda s: s.elicitation_form or s.elicitation_url,
    # Only URL-mode elicitation ever completes out of band.
    "elicitation/complete": lambda s: s.elicitation_url,
}


def method_allowed(method: str, signals: ClientSignals) -> bool:
    """Whether a client with these capabilities handles a stable client-side method."""
    if method in UNGATED_CLIENT_METHODS:
        return True
    gate = GATED_CLIENT_METHODS.get(method)
    return gate is not None and gate(signals)
