"""The protected paths of one workspace root, found by a bounded walk kept between commands.

The first command in a workspace walks it (``os.scandir``, links not followed) and keeps,
per directory, its inode, its change and modification times and what it holds that
matters: its subdirectories and its protected entries (:class:`~._match.Matcher`).
Protected entries are not descended into (a protected directory is bound read-only as a
whole, so the objects of a ``.git`` are never listed), nor are the hidden homes.

Every later :meth:`WorkspaceTree.refresh` stats the known directories only and lists again
those whose times changed: creating, removing or renaming an entry changes its
directory's ctime, which no process can set back (``utime`` sets ctime to now). A
directory whose ctime was within :data:`RACY_NS` of the clock when it was listed may have
changed again within the same timestamp tick, so it is listed again next time. Cost: one
``lstat`` per directory, plus listing what changed.

A refresh stops at its budget (entries listed, seconds); the rest stays :attr:`pending`
and the tree is not :attr:`complete` until a later refresh lists it. Directories left
pending by the check after a command (:meth:`refresh` with ``suspect``) were made during
that command: protected entries found in them later are collected in :attr:`late`.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from acpwire.sandbox.protected._match import BARE_REPO_NAMES, Matcher

__all__ = ["RACY_NS", "Protected", "WorkspaceTree"]

RACY_NS: Final = 50_000_000
"""A directory whose ctime is this close (ns) to the clock when listed is listed again
(coarse file-system timestamps: a change in the same tick keeps the same ctime)."""


@dataclass(frozen=True, slots=True)
class Protected:
    """One protected entry as found: where, which inode, why."""

    path: str
    dev: int
    ino: int
    is_dir: bool
    is_link: bool
    reason: str
    target: str | None = None
    """A link's target (as written): a link is the same entry only with the same target."""
    ctime: int = 0
    """When it was found: an entry whose ctime differs since was changed or replaced."""


@dataclass(slots=True)
class _Dir:
    ino: int
    ctime: int
    mtime: int
    racy: bool
    subdirs: tuple[str, ...]
    protected: tuple[str, ...]


class WorkspaceTree:
    """The walk of ``root``; use under :attr:`lock` (one command's check at a time)."""

    def __init__(self, root: str, matcher: Matcher, skip: Iterable[str] = ()) -> None:
        self.root = root
        self.matcher = matcher
        self.skip = frozenset(skip)
        self.lock = threading.Lock()
        self.dirs: dict[str, _Dir] = {}
        self.found: dict[str, Protected] = {}
        self.pending: list[str] = [root]
        self.suspect: set[str] = set()
        self.late: list[Protected] = []
        self.listed = 0
        """Entries listed by the last refresh (for the log and the measurements)."""

    @property
    def complete(self) -> bool:
        return not self.pending

    def refresh(
        self, *, entries: int, seconds: float, max_dirs: int, suspect: bool = False
    ) -> bool:
        """Bring the tree up to date within the budget; True when it is complete. The
        changed directories are listed first; with ``suspect``, those a cut leaves
        unlisted (changed ones, and new ones found meanwhile) become suspect."""
        deadline = time.monotonic() + seconds
        changed = self._changed()
        seen = set(changed)
        queue = [path for path in self.pending if path not in seen]
        fresh: set[str] = set()
        self.pending = []
        self.listed = 0
        while changed or queue:
            over = self.listed >= entries or time.monotonic() > deadline
            if over or len(self.dirs) >= max_dirs:
                if suspect:
                    self.suspect.update(changed)
                    self.suspect.update(path for path in queue if path in fresh)
                self.pending = queue + changed
                return False
            from_changes = bool(changed)
            path = changed.pop() if changed else queue.pop()
            to_list, appeared = self._list(path)
            if from_changes:
                fresh.update(appeared)  # new in a changed directory, not merely not reached
            elif path in fresh:
                fresh.update(to_list)  # everything in a new directory is new
            queue += to_list
        return True

    def _changed(self) -> list[str]:
        changed: list[str] = []
        for path, known in list(self.dirs.items()):
            if path not in self.dirs:
                continue  # dropped with a parent meanwhile
            try:
                st = os.lstat(path)
            except OSError:
                self._drop(path)
                continue
            if not stat.S_ISDIR(st.st_mode) or st.st_ino != known.ino:
                self._drop(path)  # replaced: its parent changed too and lists it again
                if path == self.root:
                    changed.append(path)
                continue
            if known.racy or st.st_ctime_ns != known.ctime or st.st_mtime_ns != known.mtime:
                changed.append(path)
        return changed

    def _list(self, path: str) -> tuple[list[str], list[str]]:
        """List ``path`` again: the subdirectories still to list, and those that were not
        in its last listing."""
        old = self.dirs.get(path)
        if path != self.root and os.path.dirname(path) not in self.dirs:
            self.suspect.discard(path)
            return [], []  # its parent is gone (or now a link): never listed through it
        try:
            st = os.lstat(path)
            now = time.time_ns()
            if not stat.S_ISDIR(st.st_mode):
                raise NotADirectoryError(path)
            with os.scandir(path) as listing:
                entries = list(listing)
        except OSError:
            self._drop(path)
            return [], []
        self.listed += len(entries)
        suspect = path in self.suspect
        self.suspect.discard(path)
        subdirs: list[str] = []
        protected: list[str] = []
        if path != self.root and {entry.name for entry in entries} >= BARE_REPO_NAMES:
            entries = []  # a bare repository: protected as a whole, from its parent's view
            self._add(path, st, "a bare git repository", suspect)
            protected.append(path)
        matcher, skip = self.matcher, self.skip
        whole = matcher.whole_paths(path)
        for entry in entries:
            try:
                if matcher.hit(entry.path, entry.name, whole):
                    reason = matcher.reason(entry.path)
                    if reason is not None:
                        self._add(entry.path, entry.stat(follow_symlinks=False), reason, suspect)
                        protected.append(entry.path)
                        continue
                if entry.is_dir(follow_symlinks=False) and entry.path not in skip:
                    subdirs.append(entry.path)
            except OSError:
                continue  # gone meanwhile: the directory's times changed, listed again
        racy = now - st.st_ctime_ns < RACY_NS or now - st.st_mtime_ns < RACY_NS
        for gone in set(old.protected if old else ()) - set(protected):
            self.found.pop(gone, None)
        for gone in set(old.subdirs if old else ()) - set(subdirs):
            self._drop(gone)
        self.dirs[path] = _Dir(
            st.st_ino, st.st_ctime_ns, st.st_mtime_ns, racy, tuple(subdirs), tuple(protected)
        )
        new = [sub for sub in subdirs if sub not in self.dirs]
        if suspect:
            self.suspect.update(new)
        return new, [sub for sub in subdirs if sub not in set(old.subdirs if old else ())]

    def _add(self, path: str, st: os.stat_result, reason: str, suspect: bool) -> None:
        is_link = stat.S_ISLNK(st.st_mode)
        target = os.readlink(path) if is_link else None
        is_dir = stat.S_ISDIR(st.st_mode)
        found = Protected(
            path, st.st_dev, st.st_ino, is_dir, is_link, reason, target, st.st_ctime_ns
        )
        known = self.found.get(path)
        if suspect and (known is None or known.ino != found.ino):
            self.late.append(found)
        self.found[path] = found

    def _drop(self, path: str) -> None:
        """Forget ``path`` and everything known below it."""
        stack = [path]
        while stack:
            known = self.dirs.pop(stack.pop(), None)
            if known is None:
                continue
            for entry in known.protected:
                self.found.pop(entry, None)
            stack.extend(known.subdirs)
        self.suspect.discard(path)
