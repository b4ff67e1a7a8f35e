"""Per sandboxed command: every protected path of the workspace read-only, and a check after.

Before the command (:meth:`SandboxGuard.start`): the walk of each workspace root
(:class:`~.tree.WorkspaceTree`, kept between commands and brought up to date) lists the
protected paths at any depth, which are bound read-only, with the git directories and
``core.hooksPath`` directories of the nested repositories it found; at the fixed places
that are missing (:data:`PLACEHOLDER_NAMES` at each root, a missing ``core.hooksPath``
directory) an empty placeholder is bound read-only (:mod:`.placeholders`). What is
bound and what is held by placeholders is worked out in :mod:`.holds`.

After it (:meth:`SandboxGuard.finish`): the placeholders go, the walk is brought up to
date again, and every protected entry that was not there before (by inode; a link also
by path, target and the target's inode) is moved to the quarantine (:mod:`.quarantine`): the
patterns (``.env.production``, ``sub/.envrc``, the user's globs) and nested repositories
(``sub/.git``) cannot be held by a placeholder.

Budgets: a walk lists at most :data:`WALK_ENTRIES` entries in :data:`WALK_SECONDS` per
command (the next command goes on from where it stopped) and keeps at most
:data:`MAX_DIRS` directories; :data:`MAX_BINDS` places at most are bound (a directory with
:data:`GROUP_BINDS` protected entries or more counts once, bound whole). Past
them the protected paths are not all held, which :meth:`SandboxGuard.survey` reports so
that the command is asked. The check after a command has a larger budget
(:data:`CHECK_ENTRIES`, :data:`CHECK_SECONDS`); what it cannot list then is checked at
the next command, and protected entries found there are moved then.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Final

from acpwire.agent.seam import GuardRefused, GuardReport
from acpwire.sandbox.bwrap import bwrap_argv
from acpwire.sandbox.policy import CREDENTIAL_DIRS, workspace_policy, writable_roots
from acpwire.sandbox.protected._match import Matcher
from acpwire.sandbox.protected.holds import (
    GROUP_BINDS,
    PLACEHOLDER_NAMES,
    bind_paths,
    grouped,
    identity,
    missing_chains,
)
from acpwire.sandbox.protected.placeholders import Placeholders
from acpwire.sandbox.protected.quarantine import Moved, quarantine
from acpwire.sandbox.protected.tree import Protected, WorkspaceTree

__all__ = [
    "CHECK_ENTRIES",
    "CHECK_SECONDS",
    "GROUP_BINDS",
    "MAX_BINDS",
    "MAX_DIRS",
    "PLACEHOLDER_NAMES",
    "WALK_ENTRIES",
    "WALK_SECONDS",
    "SandboxGuard",
]

WALK_ENTRIES: Final = 200_000
WALK_SECONDS: Final = 2.0
CHECK_ENTRIES: Final = 1_000_000
CHECK_SECONDS: Final = 10.0
MAX_DIRS: Final = 100_000
MAX_BINDS: Final = 256
"""bubblewrap's start-up grows with the square of its mounts (each read-only bind reads
the mount table): about 40 ms at 100, 100 ms at 200, 500 ms at 500 here."""
_MAX_TREES: Final = 8

_lock = threading.Lock()
_trees: OrderedDict[tuple[str, tuple[str, ...], tuple[str, ...]], WorkspaceTree] = OrderedDict()
_books: dict[Path, Placeholders] = {}


def _tree(
    root: str, extra: tuple[str, ...], homes: tuple[str, ...], skip: list[str]
) -> WorkspaceTree:
    key = (root, extra, homes)
    with _lock:
        tree = _trees.pop(key, None) or WorkspaceTree(root, Matcher(extra, homes), skip)
        _trees[key] = tree
        while len(_trees) > _MAX_TREES:
            _trees.popitem(last=False)
        return tree


def _book(home: Path) -> Placeholders:
    with _lock:
        return _books.setdefault(home, Placeholders(home / "sandbox" / "placeholders"))


class SandboxGuard:
    """One sandboxed command's :class:`~acpwire.agent.seam.CommandGuard`."""

    def __init__(
        self,
        *,
        bwrap: str,
        command: str,
        env: Mapping[str, str],
        cwd: str,
        home: Path,
        hidden_homes: Iterable[Path] = (),
        network: bool = False,
        extra_sensitive: Iterable[str] = (),
        roots: Iterable[str] = (),
    ) -> None:
        self.bwrap, self.command, self.env, self.cwd = bwrap, command, dict(env), cwd
        self.home, self.network = home, network
        self.hidden_homes = tuple(hidden_homes)
        self.roots = tuple(roots)
        self.writable = writable_roots(cwd, self.roots)
        user_home = Path(os.environ.get("HOME") or Path.home())
        skip = [str(Path(p).expanduser().resolve()) for p in self.hidden_homes]
        skip += [str((user_home / name).resolve()) for name in CREDENTIAL_DIRS]
        extra, homes = tuple(extra_sensitive), (str(home),)
        self.trees = [_tree(str(root), extra, homes, skip) for root in self.writable]
        self.book = _book(home)
        self.incomplete_ok = False
        """Set when the user was asked about :meth:`survey`'s reason: run with what is known."""
        self._before: set[tuple[object, ...]] = set()
        self._held: list[str] = []
        self._moved: list[Moved] = []
        self._unlisted: set[str] = set()
        """Directories the walk had not listed when the command started."""

    def survey(self) -> str | None:
        """Walk on where the last walk stopped; why the protected paths are not all held
        (the reason to ask), or None."""
        for tree in self.trees:
            with tree.lock:
                if not tree.complete:
                    tree.refresh(entries=WALK_ENTRIES, seconds=WALK_SECONDS, max_dirs=MAX_DIRS)
        return self._problem()

    def _problem(self) -> str | None:
        for tree in self.trees:
            if not tree.complete:
                return (
                    f"the workspace is too large to find all its protected paths ({tree.root}:"
                    f" over {len(tree.dirs)} directories walked); those not found yet are not"
                    " held read-only in the sandbox"
                )
            units = len(grouped(list(tree.found.values()), self.writable))
            if units > MAX_BINDS:
                return (
                    f"{tree.root} holds {len(tree.found)} protected paths in {units} places,"
                    f" more than the {MAX_BINDS} the sandbox holds read-only"
                )
        return None

    def start(self) -> tuple[str, ...]:
        self.book.sweep()
        found: list[Protected] = []
        # Known complete, only changes are listed: the larger budget, rather than refuse.
        entries, seconds = (
            (WALK_ENTRIES, WALK_SECONDS) if self.incomplete_ok else (CHECK_ENTRIES, CHECK_SECONDS)
        )
        for tree in self.trees:
            with tree.lock:
                tree.refresh(entries=entries, seconds=seconds, max_dirs=MAX_DIRS)
                late, tree.late = tree.late, []
                if late:  # made by an earlier command, found only now
                    self._moved += quarantine(late, root=tree.root, home=self.home)
                    tree.refresh(entries=entries, seconds=seconds, max_dirs=MAX_DIRS)
                found += tree.found.values()
                self._unlisted.update(tree.pending)
        problem = self._problem()
        if problem is not None and not self.incomplete_ok:
            report = GuardReport(tuple((m.path, m.reason, m.moved_to) for m in self._moved))
            self._moved = []
            raise GuardRefused(f"not run: {problem}; run it again to be asked", report)
        self._before = {identity(entry) for entry in found}
        try:
            binds = bind_paths(found, self.writable, MAX_BINDS)
            for chain in missing_chains(found, self.writable):
                for index, path in enumerate(chain):
                    key = self.book.acquire(path)
                    if key is None:
                        break
                    self._held.append(path)
                    self._before.add((key[0], key[1], True))
                    if index == 0:
                        binds.append(Path(path))
            policy = workspace_policy(
                self.cwd,
                roots=self.roots,
                hidden_homes=self.hidden_homes,
                network=self.network,
                protected=binds,
            )
            return tuple(bwrap_argv(self.bwrap, policy, self.command, self.env))
        except BaseException:
            self._release()
            raise

    def _made(self, entry: Protected, root: str) -> bool:
        """Whether the command (or someone, while it ran) made ``entry``: not there before,
        in a directory listed before it (what lies in a directory the walk had not
        reached yet may have been there all along)."""
        if identity(entry) in self._before:
            return False
        parent = os.path.dirname(entry.path)
        while parent.startswith(root) and parent != root:
            if parent in self._unlisted:
                return False
            parent = os.path.dirname(parent)
        return root not in self._unlisted

    def _release(self) -> None:
        for path in reversed(self._held):
            self.book.release(path)
        self._held = []

    def finish(self) -> GuardReport:
        self._release()
        note = ""
        for tree in self.trees:
            with tree.lock:
                done = tree.refresh(
                    entries=CHECK_ENTRIES, seconds=CHECK_SECONDS, max_dirs=MAX_DIRS, suspect=True
                )
                new = [p for p in tree.found.values() if self._made(p, tree.root)]
                new += tree.late
                tree.late = []
                if new:
                    self._moved += quarantine(new, root=tree.root, home=self.home)
            if not done:
                note = (
                    "the check for protected paths after the command stopped at its budget;"
                    " what it did not reach is checked before the next command"
                )
        moved = tuple((m.path, m.reason, m.moved_to) for m in self._moved)
        self._moved = []
        return GuardReport(moved, note)
