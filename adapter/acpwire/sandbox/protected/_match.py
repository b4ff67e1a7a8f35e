"""Which entries of a workspace walk are protected: a fast first test, then the list's own.

:func:`acpwire.approval.protected.is_sensitive` is the authority, but it is too slow to
run on every one of tens of thousands of names. :class:`Matcher` asks it only about the
entries that can be protected at all: a name the list names by itself
(:data:`~acpwire.approval.protected.PROTECTED_NAME`, one regular expression), and, in the
directories where the whole path matters, a path that is one of the list's absolute
places (config homes, start-up files under the user's home, cron and systemd
directories) or a match of one of the user's ``sensitive_paths`` globs (compiled into one
regular expression, matched as the list matches them: against the name and the whole
path). A bare git repository (a directory holding ``HEAD``, ``objects`` and ``refs``) is
protected as a whole too; the walk tells it by the names it lists.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable
from pathlib import PurePath
from typing import Final

from acpwire.approval.protected import PROTECTED_NAME, is_sensitive, protected_places

__all__ = ["BARE_REPO_NAMES", "Matcher"]

BARE_REPO_NAMES: Final = frozenset({"HEAD", "objects", "refs"})
"""The entries that make a directory a git directory of its own."""
_SYSTEM: Final = ("/etc/cron", "/etc/anacrontab", "/var/spool/cron", "/etc/systemd")
_SYSTEM_PARENTS: Final = frozenset({"/etc", "/var/spool"})


def _key(path: str | PurePath) -> str:
    return str(path).replace("\\", "/").lower().rstrip("/") or "/"


class Matcher:
    """The protected-path test of one walk: the user's globs and the config homes."""

    def __init__(
        self, extra_patterns: Iterable[str] = (), homes: Iterable[str | PurePath] = ()
    ) -> None:
        self.extra = tuple(extra_patterns)
        self.homes = tuple(homes)
        self.places = frozenset(_key(place) for place in protected_places(self.homes))
        self.parents = frozenset(os.path.dirname(place) for place in self.places)
        globs = [fnmatch.translate(p.replace("\\", "/").lower()) for p in self.extra if p]
        self._globs = re.compile("|".join(globs)) if globs else None

    def whole_paths(self, directory: str) -> bool:
        """Whether the entries of ``directory`` need :meth:`hit`'s whole-path tests."""
        if self._globs is not None:
            return True
        key = _key(directory)
        return key in self.parents or key in _SYSTEM_PARENTS

    def hit(self, path: str, name: str, whole: bool) -> bool:
        """Whether the entry may be protected (then :meth:`reason` says); ``whole``:
        what :meth:`whole_paths` said of its directory."""
        if PROTECTED_NAME.fullmatch(name):
            return True
        if not whole:
            return False
        full = _key(path)
        if full in self.places or full.startswith(_SYSTEM):
            return True
        glob = self._globs
        return glob is not None and bool(glob.fullmatch(name.lower()) or glob.fullmatch(full))

    def reason(self, path: str) -> str | None:
        """Why ``path`` is protected, or None: the list's own answer."""
        return is_sensitive(path, self.extra, homes=self.homes)
