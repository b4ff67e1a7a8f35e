"""Whether a command is asked, and whether it runs in the sandbox: one decision per command.

==================  ==============================  =====================================
session mode        sandbox available               no sandbox (no bubblewrap...)
==================  ==============================  =====================================
``full_access``     runs unsandboxed, unasked       runs unsandboxed, unasked
every other mode    runs sandboxed, unasked         asked, except the read-only list
==================  ==============================  =====================================

In every mode a command the danger patterns flag is asked too (the pattern's reason is
the title's hint), and a command the model marks as needing more (``sandbox: "network"``
or ``"none"``, with a justification) is asked with a title saying it leaves the sandbox.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal, get_args

from acpwire.sandbox.readonly import is_read_only

__all__ = [
    "ESCALATIONS",
    "FULL_ACCESS",
    "NO_SANDBOX_REASON",
    "READ_ONLY_GIT_ENV",
    "CommandDecision",
    "Escalation",
    "decide_command",
]

FULL_ACCESS: Final = "full_access"
"""The only session mode that runs unsandboxed commands unasked."""
Escalation = Literal["sandbox", "network", "none"]
ESCALATIONS: Final = frozenset(get_args(Escalation))
NO_SANDBOX_REASON: Final = "no command sandbox here, every command is asked"
READ_ONLY_GIT_ENV: Final = {
    "GIT_CONFIG_COUNT": "3",
    "GIT_CONFIG_KEY_0": "core.fsmonitor",
    "GIT_CONFIG_VALUE_0": "false",
    "GIT_CONFIG_KEY_1": "core.pager",
    "GIT_CONFIG_VALUE_1": "cat",
    "GIT_CONFIG_KEY_2": "diff.external",
    "GIT_CONFIG_VALUE_2": "",
}
"""Set for read-only-list commands run unasked without a sandbox: a repository's own git
config cannot make ``git status`` or ``git diff`` run a program."""


@dataclass(frozen=True, slots=True)
class CommandDecision:
    """``ask``: the reason shown when the user must be asked (None: run unasked)."""

    ask: str | None
    sandboxed: bool
    network: bool = False
    leaves_sandbox: bool = False
    read_only: bool = False


def _why(justification: str) -> str:
    text = " ".join(justification.split())
    return f" ({text})" if text else ""


def decide_command(
    command: str,
    *,
    mode: str,
    sandbox_available: bool,
    danger: str | None,
    escalation: Escalation = "sandbox",
    justification: str = "",
    cwd: str | None = None,
    extra_sensitive: Iterable[str] = (),
) -> CommandDecision:
    """The decision for one command (see the module docstring for the table); ``cwd``
    (the workspace) limits the read-only list to reads of its unprotected files."""
    if escalation not in ESCALATIONS:
        raise ValueError(f"sandbox must be one of {sorted(ESCALATIONS)}, got {escalation!r}")
    if mode == FULL_ACCESS:
        return CommandDecision(danger, sandboxed=False)
    if escalation == "none" or (escalation == "network" and not sandbox_available):
        where = "leaves the sandbox" if sandbox_available else "no sandbox"
        hint = f"; {danger}" if danger else ""
        return CommandDecision(
            f"runs outside the sandbox ({where}){_why(justification)}{hint}",
            sandboxed=False,
            leaves_sandbox=True,
        )
    if escalation == "network":
        hint = f"; {danger}" if danger else ""
        return CommandDecision(
            f"leaves the sandbox: network access{_why(justification)}{hint}",
            sandboxed=True,
            network=True,
            leaves_sandbox=True,
        )
    if sandbox_available:
        return CommandDecision(danger, sandboxed=True)
    if danger is None and is_read_only(command, cwd=cwd, extra_sensitive=extra_sensitive):
        return CommandDecision(None, sandboxed=False, read_only=True)
    return CommandDecision(danger or NO_SANDBOX_REASON, sandboxed=False)
