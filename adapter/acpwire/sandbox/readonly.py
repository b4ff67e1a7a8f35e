"""Commands that only look: run unasked when no sandbox is available.

A short, conservative list, checked on a real shell tokenisation (:mod:`shlex` with
punctuation characters). A command passes only when every part of it (``;``, ``&&``,
``||`` and ``|`` separate parts) is a listed program with no option that writes or runs
something else, and the text has no redirection, substitution, expansion, subshell,
background job, here-document, comment, escape, newline or variable assignment. A pipe
into an interpreter fails because an interpreter is not on the list. Given the
workspace, every part must also read only unprotected workspace files
(:mod:`._reads`).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from typing import Final

from acpwire.sandbox._reads import reads_stay_inside

__all__ = ["READ_ONLY_PROGRAMS", "is_read_only"]

_SEPARATORS: Final = frozenset({";", "&&", "||", "|"})
_FORBIDDEN_CHARS: Final = frozenset("$`<>(){}\\#\n\r&!")
"""Characters a read-only command never needs (``&`` only inside ``&&``, checked below)."""

READ_ONLY_PROGRAMS: Final[Mapping[str, frozenset[str]]] = {
    # program -> options (or option prefixes ending in "=") that disqualify it
    "ls": frozenset(),
    "cat": frozenset(),
    "pwd": frozenset(),
    "echo": frozenset(),
    "head": frozenset(),
    "tail": frozenset({"-f", "-F", "--follow"}),
    "wc": frozenset({"--files0-from="}),
    "grep": frozenset(),
    "egrep": frozenset(),
    "fgrep": frozenset(),
    "rg": frozenset({"--pre", "--pre=", "--pre-glob", "--pre-glob="}),
    "find": frozenset(
        {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
    ),
    "stat": frozenset(),
    "file": frozenset({"-C", "--compile", "-m", "--magic-file"}),
    "which": frozenset(),
    "realpath": frozenset(),
    "basename": frozenset(),
    "dirname": frozenset(),
    "uname": frozenset(),
    "whoami": frozenset(),
    "id": frozenset(),
    "du": frozenset(),
    "printenv": frozenset(),
}
_GIT_READS: Final = frozenset({"status", "log", "diff", "show", "rev-parse", "ls-files", "blame"})
_GIT_FORBIDDEN: Final = frozenset({"--output=", "--output", "-o", "--ext-diff", "--textconv"})


def _words(command: str) -> list[str] | None:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes
        return None


def _forbidden(option: str, forbidden: frozenset[str]) -> bool:
    return any(option == bad or (bad.endswith("=") and option.startswith(bad)) for bad in forbidden)


def _listed(words: list[str]) -> bool:
    if not words or "=" in words[0] or "/" in words[0]:
        return False  # an assignment (X=rm), or a program by path (./ls)
    program, args = words[0], words[1:]
    if program == "git":
        if not args or args[0] not in _GIT_READS:
            return False  # global options (-c core.pager=...) and other subcommands
        return not any(_forbidden(arg, _GIT_FORBIDDEN) for arg in args[1:])
    forbidden = READ_ONLY_PROGRAMS.get(program)
    if forbidden is None:
        return False
    return not any(_forbidden(arg, forbidden) for arg in args)


def is_read_only(
    command: str,
    *,
    cwd: str | None = None,
    roots: Iterable[str] = (),
    extra_sensitive: Iterable[str] = (),
) -> bool:
    """Whether ``command`` is on the read-only list (see the module docstring); with
    ``cwd`` (the workspace, ``roots`` the other roots), also whether it reads only
    unprotected files of the workspace."""
    workspace = tuple(roots)
    extra = tuple(extra_sensitive)

    def _part_ok(words: list[str]) -> bool:
        if not _listed(words):
            return False
        if cwd is None:
            return True
        return reads_stay_inside(
            words[0], words[1:], cwd=cwd, roots=workspace, extra_sensitive=extra
        )

    stripped = command.replace("&&", "")
    if not command.strip() or any(char in _FORBIDDEN_CHARS for char in stripped):
        return False
    words = _words(command)
    if words is None:
        return False
    part: list[str] = []
    for word in words:
        if word in _SEPARATORS:
            if not _part_ok(part):
                return False
            part = []
        elif word and set(word) <= set(";&|"):
            return False  # ;; or |& or a lone &
        else:
            part.append(word)
    return _part_ok(part)
