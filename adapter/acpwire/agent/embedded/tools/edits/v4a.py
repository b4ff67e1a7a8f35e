"""Parsing and applying V4A patches (the ``*** Begin Patch`` multi-file format).

A patch is a list of file operations: ``*** Add File: p`` (``+`` lines), ``*** Delete
File: p`` and ``*** Update File: p`` (optionally ``*** Move to: q``) with hunks. A hunk
may start with ``@@ <anchor line>`` and holds context (space), removed (``-``) and
added (``+``) lines. Hunks are located in order; matching falls back from exact lines
to trailing-whitespace and then all-whitespace insensitive comparison.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from acpwire.agent.embedded.tools.edits.fuzzy import PatchError

BEGIN, END = "*** Begin Patch", "*** End Patch"
_ADD, _DELETE, _UPDATE, _MOVE = (
    "*** Add File: ",
    "*** Delete File: ",
    "*** Update File: ",
    "*** Move to: ",
)
_EOF = "*** End of File"


@dataclass(slots=True)
class Hunk:
    anchor: str | None = None
    lines: list[tuple[str, str]] = field(default_factory=list)
    at_eof: bool = False
    trailing_blank: int = 0


@dataclass(slots=True)
class FileOp:
    kind: Literal["add", "delete", "update"]
    path: str
    move_to: str | None = None
    added: list[str] = field(default_factory=list)
    hunks: list[Hunk] = field(default_factory=list)
    bare_blanks: int = 0
    """Unprefixed blank lines seen since the last ``+`` line of an added file: content
    if more ``+`` lines follow, spacing before the next header if none do."""


def parse_patch(text: str) -> list[FileOp]:
    """Parse V4A text into file operations; raises :class:`PatchError` on malformed input."""
    lines = text.replace("\r\n", "\n").strip().split("\n")
    if not lines or lines[0].strip() != BEGIN:
        raise PatchError(f"a patch must start with '{BEGIN}'")
    if lines[-1].strip() != END:
        raise PatchError(f"a patch must end with '{END}'")
    ops: list[FileOp] = []
    for number, line in enumerate(lines[1:-1], start=2):
        if line.startswith(_ADD):
            ops.append(FileOp("add", _path(line, _ADD, number)))
        elif line.startswith(_DELETE):
            ops.append(FileOp("delete", _path(line, _DELETE, number)))
        elif line.startswith(_UPDATE):
            ops.append(FileOp("update", _path(line, _UPDATE, number)))
        elif line.startswith(_MOVE):
            if not ops or ops[-1].kind != "update" or ops[-1].hunks or ops[-1].move_to:
                raise PatchError(f"line {number}: '*** Move to:' must follow '*** Update File:'")
            ops[-1].move_to = _path(line, _MOVE, number)
        elif not ops:
            if line.strip():
                raise PatchError(f"line {number}: expected a file header, got {line!r}")
        else:
            _body_line(ops[-1], line, number)
    if not ops:
        raise PatchError("the patch contains no file operations")
    for op in ops:
        if op.kind == "update" and not any(hunk.lines for hunk in op.hunks) and not op.move_to:
            raise PatchError(f"the update of {op.path} has no changes")
        for hunk in op.hunks:
            # Blank lines between hunks are spacing, not context.
            if hunk.trailing_blank:
                del hunk.lines[-hunk.trailing_blank :]
    return ops


def _path(line: str, prefix: str, number: int) -> str:
    path = line[len(prefix) :].strip()
    if not path:
        raise PatchError(f"line {number}: missing file path")
    return path


def _body_line(op: FileOp, line: str, number: int) -> None:
    if op.kind == "add":
        if line.startswith("+"):
            op.added += [""] * op.bare_blanks + [line[1:]]
            op.bare_blanks = 0
        elif line == "":
            op.bare_blanks += 1
        else:
            raise PatchError(f"line {number}: lines of an added file must start with '+'")
        return
    if op.kind == "delete":
        if line.strip():
            raise PatchError(f"line {number}: unexpected content after '*** Delete File:'")
        return
    if line.startswith("@@"):
        anchor = line[2:].strip()
        # A unified-diff header ("@@ -1,3 +1,4 @@") carries no usable anchor.
        op.hunks.append(Hunk(anchor=None if not anchor or anchor.startswith("-") else anchor))
        return
    if not op.hunks:
        op.hunks.append(Hunk())
    hunk = op.hunks[-1]
    if line.strip() == _EOF:
        hunk.at_eof = True
    elif line == "":
        hunk.lines.append((" ", ""))
        hunk.trailing_blank += 1
        return
    elif line[0] in " -+":
        hunk.lines.append((line[0], line[1:]))
    else:
        raise PatchError(f"line {number}: hunk lines must start with ' ', '-' or '+', got {line!r}")
    hunk.trailing_blank = 0


_NORMALISERS: tuple[Callable[[str], str], ...] = (lambda s: s, str.rstrip, str.strip)


def _find(lines: list[str], wanted: list[str], start: int, at_eof: bool) -> int | None:
    size = len(wanted)
    for normalise in _NORMALISERS:
        target = [normalise(line) for line in wanted]
        candidates = [len(lines) - size] if at_eof else []
        candidates += list(range(start, len(lines) - size + 1)) + list(range(0, start))
        for index in candidates:
            if index >= 0 and [normalise(line) for line in lines[index : index + size]] == target:
                return index
    return None


def apply_hunks(text: str, hunks: list[Hunk], path: str) -> str:
    """Apply ``hunks`` to the text of ``path``; raises :class:`PatchError` on a mismatch."""
    had_newline = text.endswith("\n")
    lines = text.replace("\r\n", "\n").split("\n") if text else []
    if had_newline:
        lines.pop()
    cursor = 0
    for number, hunk in enumerate(hunks, start=1):
        if hunk.anchor is not None:
            found = _find(lines, [hunk.anchor], cursor, False)
            if found is None:
                raise PatchError(f"{path}: hunk {number}: context '@@ {hunk.anchor}' not found")
            cursor = found + 1
        old = [body for op, body in hunk.lines if op in " -"]
        new = [body for op, body in hunk.lines if op in " +"]
        if not old:
            position = len(lines) if hunk.at_eof or hunk.anchor is None else cursor
        else:
            found = _find(lines, old, cursor, hunk.at_eof)
            if found is None:
                preview = "\\n".join(old[:3])
                raise PatchError(
                    f"{path}: hunk {number} does not match the file (expected lines"
                    f" starting {preview!r}); read the file again"
                )
            position = found
        lines[position : position + len(old)] = new
        cursor = position + len(new)
    result = "\n".join(lines)
    if had_newline or (not text and lines):
        result += "\n"
    return result.replace("\n", "\r\n") if "\r\n" in text else result
