"""What a sandboxed command may touch: the workspace-write policy, worked out per command.

Modelled on Codex CLI's workspace-write sandbox. Writable: every workspace root (the
session cwd and additional directories) and a private temp directory. Read-only: the
rest of the file system, and inside each root the git directories of the repositories
enclosing it (:func:`acpwire.approval.protected.git_dirs`: ``.git``, the ``gitdir:``
target of a worktree or submodule and its common directory, a bare repository, the
directory ``core.hooksPath`` names), the protected paths found below it (``protected``:
the walk of :mod:`acpwire.sandbox.protected.guard`, placeholders included) and, when the user's
home lies inside a root, its start-up and autostart files (:data:`HOME_PERSISTENCE`).
Not even readable: acpwire's config home, Hermes' home, the user's credential stores and
``/run`` (sockets). No network unless allowed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from acpwire.approval.protected import git_dirs

__all__ = [
    "CREDENTIAL_DIRS",
    "CREDENTIAL_FILES",
    "HOME_PERSISTENCE",
    "SandboxPolicy",
    "workspace_policy",
    "writable_roots",
]

CREDENTIAL_DIRS: Final = (".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".config/gcloud")
"""Directories of the user's home hidden from sandboxed commands (an empty tmpfs instead)."""
CREDENTIAL_FILES: Final = (".netrc", ".git-credentials", ".pgpass", ".npmrc", ".pypirc")
"""Files of the user's home hidden from sandboxed commands (``/dev/null`` instead)."""
HOME_PERSISTENCE: Final = (
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
    ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".cshrc", ".tcshrc", ".kshrc",
    ".inputrc", ".xprofile", ".xinitrc", ".xsessionrc", ".pam_environment", ".gitconfig",
    ".config/git", ".config/fish", ".config/autostart", ".config/systemd",
    ".config/environment.d", ".local/share/systemd", ".local/bin",
)  # fmt: skip
"""The protected list's entries under the user's home (shell start-up, autostart, systemd
user units, git's config, ``~/.local/bin``), bound read-only when the home lies inside a
writable root (only existing ones: a bind needs its target)."""
SOCKET_DIRS: Final = ("/run", "/var/run")
"""Hidden from sandboxed commands: a read-only mount does not stop ``connect()`` on a
socket in it, and ``/run`` holds the sockets that would run code outside the sandbox
(Docker's, the user's D-Bus and systemd, gpg and ssh agents...)."""
RESOLVER_DIRS: Final = ("/run/systemd/resolve", "/run/resolvconf", "/run/NetworkManager")
"""Shown again (read-only) to a command allowed the network: ``/etc/resolv.conf`` often
links into them."""


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """Resolved, absolute paths; the bwrap argv is built from this alone."""

    cwd: Path
    writable: tuple[Path, ...]
    read_only: tuple[Path, ...]
    """Inside the writable roots, bound read-only over them."""
    hidden_dirs: tuple[Path, ...]
    hidden_files: tuple[Path, ...]
    network: bool = False
    revealed: tuple[Path, ...] = ()
    """Bound read-only again after the hiding (the resolver's files, with network)."""


def _within(path: Path, roots: Iterable[Path]) -> bool:
    """Inside a writable root (anything else is read-only already; binding it again would
    show the host's ``/tmp`` over the private one)."""
    return any(path.is_relative_to(root) for root in roots)


def _unique(paths: Iterable[Path]) -> tuple[Path, ...]:
    return tuple(dict.fromkeys(paths))


def writable_roots(cwd: str, roots: Iterable[str] = ()) -> tuple[Path, ...]:
    """The writable roots of a command run in ``cwd``: it and ``roots``, resolved."""
    return _unique(Path(raw).resolve() for raw in (cwd, *roots))


def workspace_policy(
    cwd: str,
    *,
    roots: Iterable[str] = (),
    hidden_homes: Iterable[Path] = (),
    network: bool = False,
    protected: Iterable[Path] = (),
    env: Mapping[str, str] | None = None,
) -> SandboxPolicy:
    """The policy for a command run in ``cwd`` (a workspace root) with ``roots`` also
    writable and ``protected`` (existing paths inside them) read-only; ``hidden_homes``
    (config homes) and the user's credential stores are hidden."""
    env = os.environ if env is None else env
    writable = writable_roots(cwd, roots)
    read_only = list(protected)
    for root in writable:
        read_only += git_dirs(root)
    user_home = Path(env.get("HOME") or Path.home()).resolve()
    if any(user_home.is_relative_to(root) for root in writable):
        read_only += [user_home / name for name in HOME_PERSISTENCE]
    dirs = [Path(home).expanduser().resolve() for home in hidden_homes]
    dirs += [(user_home / name).resolve() for name in CREDENTIAL_DIRS]
    dirs += [Path(name) for name in SOCKET_DIRS if not Path(name).is_symlink()]
    revealed = [Path(name) for name in RESOLVER_DIRS] if network else []
    files = [(user_home / name).resolve() for name in CREDENTIAL_FILES]
    return SandboxPolicy(
        cwd=Path(cwd).resolve(),
        writable=writable,
        read_only=_unique(p for p in read_only if p.exists() and _within(p, writable)),
        hidden_dirs=_unique(p for p in dirs if p.is_dir()),
        hidden_files=_unique(p for p in files if p.is_file()),
        network=network,
        revealed=_unique(p for p in revealed if p.is_dir()),
    )
