"""Is the command sandbox usable here? Finds bubblewrap and tries it once per binary.

The binary is ``$ACPWIRE_BWRAP`` when set (a path or a name looked up on ``PATH``; an
empty value or ``none`` turns the sandbox off), else ``bwrap`` on ``PATH``. Being installed
is not enough: a container may refuse the namespaces bubblewrap needs, so the probe runs
``true`` under the same isolation flags the real commands get and caches the answer.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["BWRAP_ENV", "INSTALL_HINT", "SandboxStatus", "sandbox_status"]

_log = logging.getLogger(__name__)

BWRAP_ENV = "ACPWIRE_BWRAP"
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) to sandbox commands"
_PROBE_FLAGS = (
    "--ro-bind", "/", "/",
    "--dev", "/dev",
    "--proc", "/proc",
    "--tmpfs", "/tmp",
    "--unshare-all",
    "--die-with-parent",
    "--new-session",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class SandboxStatus:
    """Whether commands can be sandboxed, with which binary, and if not, why not."""

    available: bool
    bwrap: str | None
    reason: str

    @property
    def hint(self) -> str:
        """One sentence for the log and ``--check``."""
        if self.available:
            return f"commands run in the bubblewrap sandbox ({self.bwrap})"
        return f"no command sandbox ({self.reason}): every command is asked; {INSTALL_HINT}"


@functools.cache
def _try(binary: str) -> SandboxStatus:
    try:
        done = subprocess.run(
            [binary, *_PROBE_FLAGS, "--", "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxStatus(False, None, f"{binary} could not run: {exc}")
    if done.returncode != 0:
        error = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = error[-1] if error else f"exit code {done.returncode}"
        return SandboxStatus(False, None, f"{binary} cannot create namespaces here: {why}")
    return SandboxStatus(True, binary, "bubblewrap works")


def sandbox_status(env: Mapping[str, str] | None = None) -> SandboxStatus:
    """The sandbox this process can use (the probe runs once per binary)."""
    env = os.environ if env is None else env
    if not sys.platform.startswith("linux"):
        return SandboxStatus(False, None, f"no sandbox on {sys.platform}")
    named = env.get(BWRAP_ENV)
    if named is not None and named.strip().lower() in ("", "none", "off"):
        return SandboxStatus(False, None, f"turned off by {BWRAP_ENV}")
    wanted = (named or "bwrap").strip()
    found = shutil.which(wanted, path=env.get("PATH")) if os.sep not in wanted else wanted
    if found is None or not os.access(found, os.X_OK):
        return SandboxStatus(False, None, f"{wanted} not found")
    status = _try(os.path.abspath(found))
    if not status.available:
        _log.debug("sandbox probe: %s", status.reason)
    return status
