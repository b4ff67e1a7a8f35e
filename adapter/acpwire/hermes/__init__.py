"""The real Hermes ``AIAgent`` (hermes-agent 0.19.0) behind the seam, when it is installed.

Hermes' agent is synchronous and reports through callback attributes it calls on its own
threads; :class:`HermesAgent` translates them to the seam's
:class:`~acpwire.agent.seam.TurnHooks`, fixing on this side what the Hermes ACP adapter
gets wrong. Modules:

- :mod:`~acpwire.hermes.modules`: :func:`available` and lazy imports of Hermes' modules;
- :mod:`~acpwire.hermes.results`: Hermes' values (arguments, todos, usage, turn results)
  in the seam's terms;
- :mod:`~acpwire.hermes.edits`: edit approvals as real per-file diffs from the turn's cwd;
- :mod:`~acpwire.hermes.turn`: tool-call ids, callbacks and approval bindings of a turn;
- :mod:`~acpwire.hermes.agent`: :class:`HermesAgent`, the ``SyncAgent``;
- :mod:`~acpwire.hermes.factory`: :class:`HermesAgentFactory`, one agent per session.

Everything Hermes-specific is imported lazily and typed ``Any``, so this package imports
cheaply (the backend imports it at start-up) and type-checks without Hermes.
"""

from __future__ import annotations

from acpwire.hermes.agent import HermesAgent
from acpwire.hermes.edits import edit_proposals
from acpwire.hermes.factory import TOOLSET, HermesAgentFactory
from acpwire.hermes.modules import available
from acpwire.hermes.results import (
    COUNTERS,
    plan_items,
    stop_kind,
    tool_args,
    turn_result,
    usage_delta,
)
from acpwire.hermes.turn import CallIds

__all__ = [
    "COUNTERS",
    "TOOLSET",
    "CallIds",
    "HermesAgent",
    "HermesAgentFactory",
    "available",
    "edit_proposals",
    "plan_items",
    "stop_kind",
    "tool_args",
    "turn_result",
    "usage_delta",
]
