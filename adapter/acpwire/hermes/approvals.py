""":class:`HermesAllowlist`: Hermes' own ``command_allowlist`` (in ``$HERMES_HOME/config.yaml``),
the remembered approvals Hermes' front ends (its CLI, gateway, hermes-acp) honour.

acpwire records an "always allow" of a flagged command there as the exact command text
(Hermes matches such entries exactly, for commands without shell operators), besides
its own per-workspace memory; ``/approvals`` lists and revokes both. Hermes writes the
file through its own ``tools.approval`` functions.
"""

from __future__ import annotations

import logging
from typing import Any

from acpwire.hermes.modules import hermes_module

__all__ = ["HermesAllowlist"]

logger = logging.getLogger(__name__)


class HermesAllowlist:
    """A :class:`~acpwire.agent.extras.SharedApprovals` over Hermes' allowlist."""

    where = "Hermes' command_allowlist ($HERMES_HOME/config.yaml, every workspace)"

    @staticmethod
    def _approval() -> Any:
        approval = hermes_module("tools.approval")
        if approval is None:
            raise RuntimeError("Hermes' tools.approval is not importable here")
        return approval

    def entries(self) -> list[str]:
        """What the allowlist holds: command texts and Hermes' danger-pattern keys."""
        return sorted(str(e) for e in self._approval().load_permanent_allowlist())

    def remember(self, command: str) -> None:
        approval = self._approval()
        patterns = set(approval.load_permanent_allowlist())
        if command in patterns:
            return
        approval.approve_permanent(command)  # this process, at once
        approval.save_permanent_allowlist(patterns | {command})

    def revoke(self, entry: str) -> bool:
        approval = self._approval()
        patterns = set(approval.load_permanent_allowlist())
        if entry not in patterns:
            return False
        approval.save_permanent_allowlist(patterns - {entry})
        with approval._lock:  # Hermes keeps a copy in memory; no public remover
            approval._permanent_approved.discard(entry)
        return True
