"""Find-and-replace that tolerates the small differences models make when quoting code.

Strategies, in order: an exact match; a line match that ignores whitespace differences
(indentation, runs of spaces); a line window whose similarity is high enough. Matches
that are not unique are refused unless ``replace_all`` is set, and similarity matching
never replaces more than one place. Replacement lines are re-indented to the indentation
found in the file. CRLF files keep their line endings.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from acpwire.agent.embedded.tools.args import ToolArgError

SIMILARITY_THRESHOLD = 0.9
_AMBIGUITY_MARGIN = 0.05


class PatchError(ToolArgError):
    """The edit cannot be applied as asked (no match, ambiguous match, bad patch)."""


@dataclass(frozen=True, slots=True)
class Replacement:
    text: str
    count: int
    strategy: str


def fuzzy_replace(
    text: str, old: str, new: str, *, replace_all: bool = False, max_chars: int | None = None
) -> Replacement:
    """Replace ``old`` with ``new`` in ``text``; raises :class:`PatchError` when it cannot,
    or when the result would be longer than ``max_chars`` (checked from the match count,
    before the result is built)."""
    if not old:
        raise PatchError("old_string must not be empty")
    if old == new:
        raise PatchError("old_string and new_string are identical; nothing to change")
    crlf = "\r\n" in text
    work = text.replace("\r\n", "\n")
    old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    cap = max_chars
    result = (
        _exact(work, old, new, replace_all, cap)
        or _whitespace_insensitive(work, old, new, replace_all, cap)
        or _similar(work, old, new, replace_all)
    )
    if result is None:
        raise PatchError(
            "old_string was not found (tried exact, whitespace-insensitive and similarity"
            " matching); read the file again and quote the text to replace exactly"
        )
    if crlf:
        return Replacement(result.text.replace("\n", "\r\n"), result.count, result.strategy)
    return result


def _ambiguous(count: int) -> PatchError:
    return PatchError(
        f"old_string matches {count} places; include more surrounding lines to make it"
        " unique, or set replace_all to change every occurrence"
    )


def _too_large(size: int, cap: int | None) -> None:
    if cap is not None and size > cap:
        raise PatchError(
            f"the edited file would be at least {size} characters, over the cap of {cap} bytes"
            " ([tools] max_file_bytes): nothing was changed"
        )


def _exact(text: str, old: str, new: str, replace_all: bool, cap: int | None) -> Replacement | None:
    count = text.count(old)
    if count == 0:
        return None
    if count > 1 and not replace_all:
        raise _ambiguous(count)
    _too_large(len(text) + count * (len(new) - len(old)), cap)
    return Replacement(text.replace(old, new), count, "exact")


def _key(line: str) -> str:
    return " ".join(line.split())


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _trim_blank(lines: list[str]) -> tuple[list[str], int, int]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end], start, len(lines) - end


def _new_lines(old_lines: list[str], new: str, lead: int, trail: int) -> list[str]:
    # Drop as many blank edge lines from the replacement as were dropped from old_string.
    lines = new.split("\n")
    while lead and lines and not lines[0].strip():
        lines.pop(0)
        lead -= 1
    while trail and lines and not lines[-1].strip():
        lines.pop()
        trail -= 1
    return lines


def _reindent(new_lines: list[str], old_lines: list[str], file_lines: list[str]) -> list[str]:
    """Carry the file's indentation over to the replacement.

    A replacement line indented like the old line at the same position takes that file
    line's indentation; other lines are shifted by the first line's difference.
    """
    old_base, file_base = _indent(old_lines[0]), _indent(file_lines[0])
    result = []
    for index, line in enumerate(new_lines):
        if not line.strip():
            result.append(line)
        elif index < len(old_lines) and _indent(line) == _indent(old_lines[index]):
            result.append(_indent(file_lines[index]) + line.lstrip())
        elif line.startswith(old_base):
            result.append(file_base + line[len(old_base) :])
        else:
            result.append(line)
    return result


def _splice(
    file_lines: list[str], starts: list[int], size: int, old_lines: list[str], new_lines: list[str]
) -> str:
    result = list(file_lines)
    for start in reversed(starts):
        window = file_lines[start : start + size]
        result[start : start + size] = _reindent(new_lines, old_lines, window)
    return "\n".join(result)


def _whitespace_insensitive(
    text: str, old: str, new: str, replace_all: bool, cap: int | None
) -> Replacement | None:
    file_lines = text.split("\n")
    old_lines, lead, trail = _trim_blank(old.split("\n"))
    if not old_lines:
        return None
    wanted = [_key(line) for line in old_lines]
    keys = [_key(line) for line in file_lines]
    size = len(wanted)
    starts: list[int] = []
    for index in range(len(file_lines) - size + 1):
        if (not starts or index >= starts[-1] + size) and keys[index : index + size] == wanted:
            starts.append(index)
    if not starts:
        return None
    if len(starts) > 1 and not replace_all:
        raise _ambiguous(len(starts))
    new_lines = _new_lines(old_lines, new, lead, trail)
    _too_large(len(starts) * sum(len(line) + 1 for line in new_lines), cap)  # a lower bound
    return Replacement(
        _splice(file_lines, starts, size, old_lines, new_lines), len(starts), "whitespace"
    )


def _similar(text: str, old: str, new: str, replace_all: bool) -> Replacement | None:
    if replace_all:
        return None
    file_lines = text.split("\n")
    old_lines, lead, trail = _trim_blank(old.split("\n"))
    size = len(old_lines)
    if not old_lines or size > len(file_lines):
        return None
    wanted = "\n".join(line.strip() for line in old_lines)
    stripped = [line.strip() for line in file_lines]
    scored: list[tuple[float, int]] = []
    for index in range(len(file_lines) - size + 1):
        matcher = difflib.SequenceMatcher(
            None, "\n".join(stripped[index : index + size]), wanted, autojunk=False
        )
        if (
            matcher.real_quick_ratio() < SIMILARITY_THRESHOLD
            or matcher.quick_ratio() < SIMILARITY_THRESHOLD
        ):
            continue
        score = matcher.ratio()
        if score >= SIMILARITY_THRESHOLD:
            scored.append((score, index))
    if not scored:
        return None
    best_score, best = max(scored)
    rivals = [
        index
        for score, index in scored
        if abs(index - best) >= size and score >= best_score - _AMBIGUITY_MARGIN
    ]
    if rivals:
        raise _ambiguous(len(rivals) + 1)
    new_lines = _new_lines(old_lines, new, lead, trail)
    return Replacement(_splice(file_lines, [best], size, old_lines, new_lines), 1, "similarity")
