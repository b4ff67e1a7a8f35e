"""Facts the probe tests expect, written out independently of the probe's own tables."""

from __future__ import annotations

VERSIONS = ("s119", "s121", "s240")
"""Package names of the bindings generated for v1.19.0, v1.21.0 and TS SDK 2.4.0."""

BASELINE_11 = frozenset(
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
"""The eleven stable v1 ``session/update`` variants every v1 client knows."""
