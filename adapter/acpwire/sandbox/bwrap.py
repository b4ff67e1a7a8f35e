"""The bubblewrap command line that runs one shell command under a :class:`SandboxPolicy`.

Mount order matters (later mounts cover earlier ones): the whole file system read-only, a
fresh ``/dev``, ``/proc`` and a private ``/tmp``, the writable roots bound read-write, the
protected paths inside them bound read-only again, and last the hidden places covered by
an empty tmpfs (directories) or ``/dev/null`` (files), so that they stay hidden even when
they lie inside a writable root (``/run`` among them: a read-only mount does not stop a
``connect()`` to the Docker or D-Bus socket in it), then the resolver's files again for a
command allowed the network. Every namespace is new (user, pid, ipc, uts, cgroup and,
unless allowed, network); the command gets its own session and dies with bubblewrap, and
when it ends the pid namespace ends every process it left behind. The environment is
replaced by ``env -i`` with the scrubbed variables, so the same argv works locally and in
the editor's terminal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acpwire.sandbox.policy import SandboxPolicy

__all__ = ["bwrap_argv", "env_argv"]


def env_argv(env: Mapping[str, str], argv: list[str]) -> list[str]:
    """``env -i K=V ... argv``: ``argv`` with exactly ``env`` as its environment."""
    pairs = [f"{name}={value}" for name, value in env.items() if "=" not in name and name]
    return ["env", "-i", *pairs, *argv]


def bwrap_argv(
    bwrap: str, policy: SandboxPolicy, command: str, env: Mapping[str, str]
) -> list[str]:
    """The full argv: ``bwrap <policy> -- env -i <env> bash -c <command>``."""
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for root in policy.writable:
        argv += ["--bind", str(root), str(root)]
    for path in policy.read_only:
        argv += ["--ro-bind", str(path), str(path)]
    for path in policy.hidden_dirs:
        argv += ["--tmpfs", str(path)]
    for path in policy.hidden_files:
        argv += ["--ro-bind", "/dev/null", str(path)]
    for path in policy.revealed:
        argv += ["--ro-bind", str(path), str(path)]
    argv += ["--unshare-all"]
    if policy.network:
        argv += ["--share-net"]
    argv += ["--die-with-parent", "--new-session", "--chdir", str(policy.cwd), "--"]
    inner = {**env, "TMPDIR": "/tmp"}
    return argv + env_argv(inner, ["bash", "-c", command])
