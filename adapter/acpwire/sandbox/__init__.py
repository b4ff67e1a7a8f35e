"""The command sandbox: bubblewrap on Linux, and what is asked where there is none.

- :mod:`~acpwire.sandbox.probe`: is bubblewrap usable here (``ACPWIRE_BWRAP`` names it);
- :mod:`~acpwire.sandbox.policy`: the workspace-write policy of one command (paths);
- :mod:`~acpwire.sandbox.bwrap`: that policy as a bubblewrap argv;
- :mod:`~acpwire.sandbox.protected`: per sandboxed run, the protected paths at every
  depth held read-only (the walk kept between commands, placeholders at missing fixed
  places) and, after it, the new ones moved out;
- :mod:`~acpwire.sandbox.readonly`: the read-only commands run unasked without a sandbox;
- :mod:`~acpwire.sandbox.decide`: per command, asked or not, sandboxed or not.

The scrubbed environment (no secrets) of commands and MCP servers alike is
:mod:`acpwire.config.environment`, below the agent layer, which uses it too. Importing this package
loads no protocol code.
"""

from acpwire.sandbox.decide import FULL_ACCESS, CommandDecision, Escalation, decide_command
from acpwire.sandbox.probe import BWRAP_ENV, INSTALL_HINT, SandboxStatus, sandbox_status
from acpwire.sandbox.readonly import is_read_only

__all__ = [
    "BWRAP_ENV",
    "FULL_ACCESS",
    "INSTALL_HINT",
    "CommandDecision",
    "Escalation",
    "SandboxStatus",
    "decide_command",
    "is_read_only",
    "sandbox_status",
]
