"""What a sandboxed command's guard holds read-only (for :class:`~.guard.SandboxGuard`).

The protected entries a walk found become bind units (:func:`grouped`: a directory with
:data:`GROUP_BINDS` of them or more is bound whole) and binds (:func:`bind_paths`: a
link's target inside the roots; the git directories of the nested repositories); the
fixed places that are missing (:data:`PLACEHOLDER_NAMES` at each root, a repository's
missing git or hooks directory) become chains of directories to hold with placeholders
(:func:`missing_chains`). :func:`identity` tells whether an entry found after the command
is one that was there before.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from acpwire.approval.protected import git_dirs, repo_dirs
from acpwire.sandbox.protected.tree import Protected

__all__ = [
    "GROUP_BINDS",
    "PLACEHOLDER_NAMES",
    "bind_paths",
    "grouped",
    "identity",
    "inside",
    "missing_chains",
]

GROUP_BINDS: Final = 8
"""A directory (not a root) holding this many protected entries is bound whole instead."""
PLACEHOLDER_NAMES: Final = (".git", ".vscode", ".idea", ".husky")
"""Held by an empty read-only directory at each workspace root where they are missing
(``.git`` only at a root that no repository encloses)."""


def identity(found: Protected) -> tuple[object, ...]:
    """What makes an entry the same one after the command: device and inode; a link also
    its path and target (a removed link's inode may be reused) and what the target is (a
    dangling link's target made by the command changes what the link means)."""
    if found.is_link:
        try:
            st = os.stat(found.path)
            target: tuple[int, int] | None = (st.st_dev, st.st_ino)
        except OSError:
            target = None
        return (found.path, found.dev, found.ino, found.target, target)
    return (found.dev, found.ino, found.is_dir)


def inside(path: Path, roots: Iterable[Path]) -> bool:
    """Inside a root and not a root or an ancestor of one (a link to the workspace itself
    must not make it all read-only)."""
    return any(path.is_relative_to(root) and path != root for root in roots)


def grouped(found: list[Protected], roots: tuple[Path, ...]) -> list[Protected]:
    """The entries to bind, shallowest first: those of a directory holding
    :data:`GROUP_BINDS` or more of them replaced by the directory (never a root)."""
    by_parent: dict[str, list[Protected]] = {}
    for entry in found:
        by_parent.setdefault(os.path.dirname(entry.path), []).append(entry)
    tops = {str(root) for root in roots}
    units: list[Protected] = []
    for parent, entries in by_parent.items():
        if len(entries) >= GROUP_BINDS and parent not in tops:
            units.append(Protected(parent, 0, 0, True, False, "holds protected entries"))
        else:
            units += entries
    return sorted(units, key=lambda entry: entry.path.count(os.sep))


def bind_paths(found: list[Protected], writable: tuple[Path, ...], limit: int) -> list[Path]:
    """What to bind read-only: the entries (a link: its target inside the roots; a
    directory with many: the directory) and the git directories of the nested
    repositories; past ``limit`` (:data:`~.guard.MAX_BINDS`: the user was asked) the
    shallowest ones."""
    binds: list[Path] = []
    for unit in grouped(found, writable)[:limit]:
        path = Path(unit.path)
        if unit.is_link:
            path = path.resolve()
            if not inside(path, writable):
                continue
        binds.append(path)
    for entry in found:
        if os.path.basename(entry.path).lower() == ".git":
            repo = Path(entry.path).parent
            binds += (d for d in repo_dirs(repo) if inside(d, writable))
    return binds


def missing_chains(found: list[Protected], writable: tuple[Path, ...]) -> list[list[str]]:
    """Chains of missing directories (top first) to hold with placeholders."""
    chains: list[list[str]] = []
    repos: list[Path] = []
    for root in writable:
        enclosing = git_dirs(root)
        repos += enclosing
        # Inside a repository a .git placeholder would end git's and other tools' search
        # for the project root here; a new sub-repository there is moved afterwards.
        names = PLACEHOLDER_NAMES[1:] if enclosing else PLACEHOLDER_NAMES
        chains += [[str(root / name)] for name in names]
    for entry in found:
        if entry.path.lower().endswith(os.sep + ".git"):
            repos += repo_dirs(Path(entry.path).parent)
    for directory in dict.fromkeys(repos):
        chain: list[str] = []
        while not os.path.lexists(directory) and inside(directory, writable):
            chain.insert(0, str(directory))
            directory = directory.parent
        if chain and os.path.isdir(directory) and not os.path.islink(directory):
            chains.append(chain)
    return [chain for chain in chains if not os.path.lexists(chain[0])]
