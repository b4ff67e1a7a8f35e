"""What the read-only list's arguments may name when no sandbox holds them: the workspace.

A read-only command runs unasked without a sandbox only when everything it may read lies
inside the workspace roots and is not protected: no absolute path, ``~`` or ``..``
(also glued to an option, ``-f/etc/x``, ``--file=~/x``); every argument naming an
existing path, and every match of a glob (matched as the shell does, dotfiles only by a
pattern starting with ``.``), resolved (links followed) into a root and not on the
protected list (so a planted ``notes -> ~/.acpwire/.env`` link is asked); and no
recursive search of contents (``grep -r``, ``rg --hidden``/``-u``/``--follow``), which
would read the protected files too.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

__all__ = ["reads_stay_inside"]

_OUTSIDE: Final = re.compile(r"~|(?:^|=|^-[A-Za-z]+)/|(?:^|/|=)\.\.(?:/|$)")
_GLOB: Final = frozenset("*?[")
_GREPS: Final = frozenset({"grep", "egrep", "fgrep"})
_GREP_RECURSIVE: Final = ("--recursive", "--dereference-recursive", "--directories", "-d")
_RG_WIDER: Final = ("--hidden", "--no-ignore", "--follow", "--unrestricted", "--search-zip")


def _short(arg: str) -> str:
    """The letters of a short-option cluster (``-rn`` -> ``rn``), else ``""``."""
    return arg[1:] if arg.startswith("-") and not arg.startswith("--") else ""


def _reads_widely(program: str, args: Sequence[str]) -> bool:
    for arg in args:
        if program in _GREPS and (
            set(_short(arg)) & {"r", "R", "d"} or arg.startswith(_GREP_RECURSIVE)
        ):
            return True
        if program == "rg" and (
            set(_short(arg)) & {"u", "L", ".", "z"} or arg.startswith(_RG_WIDER)
        ):
            return True
    return False


def _inside(name: str, cwd: Path, roots: Sequence[Path], extra: tuple[str, ...]) -> bool:
    from acpwire.approval.protected import is_sensitive  # the protected list, on need

    path = cwd / name
    try:
        if not (path.exists() or path.is_symlink()):
            return True  # names nothing (a pattern, a missing file): reads nothing
        resolved = path.resolve()
    except (OSError, RuntimeError, ValueError):
        return False  # cannot tell (a name too long, a link loop): asked
    if not any(resolved.is_relative_to(root) for root in roots):
        return False
    return is_sensitive(resolved, extra) is None and is_sensitive(path, extra) is None


def reads_stay_inside(
    program: str,
    args: Sequence[str],
    *,
    cwd: str,
    roots: Iterable[str] = (),
    extra_sensitive: Iterable[str] = (),
) -> bool:
    """Whether ``program args`` (one part of a read-only command) reads only unprotected
    files of the workspace (``cwd`` and ``roots``)."""
    if _reads_widely(program, args):
        return False
    base = Path(cwd).resolve()
    resolved_roots = [base, *(Path(root).resolve() for root in roots)]
    extra = tuple(extra_sensitive)
    for arg in args:
        if _OUTSIDE.search(arg):
            return False
        if arg.startswith("-"):
            continue
        names = glob.glob(arg, root_dir=base) if _GLOB & set(arg) else [arg]
        if not all(_inside(name, base, resolved_roots, extra) for name in names):
            return False
    return True
