"""What counts as JSON on the wire, parsed fast: the checks ``json.loads`` leaves out.

``json.loads`` accepts more than JSON: ``NaN`` and ``Infinity`` literals, surrogate code
points encoded in UTF-8 bytes (it decodes bytes with ``surrogatepass``), UTF-16 and
UTF-32 text (it detects them), and values nested as deep as the interpreter's recursion
limit, beyond which it raises ``RecursionError``. :func:`load_strict` parses one line as
JSON in UTF-8 (RFC 8259) with pydantic-core's parser (several times faster, and it stops
at about :data:`MAX_DEPTH` levels). That parser refuses one thing JSON allows: a lone
surrogate written as an escape (``"\\ud800"``, half an emoji from a JavaScript peer);
such a line goes to ``json.loads`` after a depth check of its own (two byte counts, and a
scan only when the line holds more than :data:`MAX_DEPTH` brackets).

A line refused as too deep is not yet known to be JSON: :func:`outline` reads it without
recursion (regular expressions over runs of brackets, the open containers kept in a
``bytearray``), refuses it when it is not JSON, and otherwise gives its top-level members
with every array and object emptied, so that the envelope rules can classify it (its id,
whether it is a notification) like any other message.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from itertools import accumulate
from typing import Final, NoReturn

from pydantic_core import from_json

__all__ = ["MAX_DEPTH", "Outline", "TooDeep", "load_strict", "nesting_depth", "outline"]

MAX_DEPTH: Final = 200
"""Arrays and objects nested more deeply than this are refused (pydantic-core's own
JSON parser stops at about the same depth)."""

_STRING: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS: Final = bytes(b for b in range(256) if b not in b"[]{}")
_STEP: Final = [1 if b in b"[{" else -1 if b in b"]}" else 0 for b in range(256)]


class TooDeep(ValueError):
    """The line nests arrays and objects more deeply than :data:`MAX_DEPTH`."""

    def __init__(self, depth: int | None = None) -> None:
        super().__init__(f"JSON nested deeper than {MAX_DEPTH} levels")
        self.depth = depth


def nesting_depth(line: bytes) -> int:
    """The deepest nesting of arrays and objects in ``line``, brackets inside strings
    not counted (for a malformed line, an estimate: parsing it fails anyway)."""
    brackets = _STRING.sub(b"", line).translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def _constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def load_strict(line: bytes) -> object:
    """One JSON value from ``line``.

    Raises :class:`TooDeep`, ``UnicodeDecodeError`` (not UTF-8, or surrogates encoded
    in it) or another ``ValueError`` (not JSON, ``NaN``/``Infinity``) naming the problem.
    """
    try:
        return from_json(line, allow_inf_nan=False, cache_strings=False)
    except ValueError as exc:
        problem = str(exc)
        if problem.startswith("recursion limit exceeded"):
            raise TooDeep() from None
        if problem.startswith("invalid unicode code point"):
            raise ValueError(f"message is not valid UTF-8 ({problem})") from None
        if "surrogate" not in problem and "hex escape" not in problem:
            raise
    if line.count(b"[") + line.count(b"{") > MAX_DEPTH:
        depth = nesting_depth(line)
        if depth > MAX_DEPTH:
            raise TooDeep(depth)
    try:
        return json.loads(line.decode("utf-8"), parse_constant=_constant)
    except RecursionError:  # not reached below MAX_DEPTH; kept as a backstop
        raise TooDeep() from None


@dataclass(frozen=True, slots=True)
class Outline:
    """A JSON line too deep to parse, read without its nesting (:func:`outline`)."""

    value: object
    """The line's value with every array and object inside it emptied: a top-level
    object keeps its members, with ``{}`` or ``[]`` for the structured ones."""
    deepest: str | None
    """The top-level member nested most deeply (None when the line is not an object)."""


_WS: Final = rb"[ \t\n\r]*+"
_TEXT: Final = rb'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*+"'
_SPACE: Final = re.compile(_WS)
_SCALAR_PATTERN: Final = (
    _TEXT + rb"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null"
)
_EMPTY_PATTERN: Final = rb"\[" + _WS + rb"\]|\{" + _WS + rb"\}"
_SCALAR: Final = re.compile(_SCALAR_PATTERN)
_EMPTY: Final = re.compile(_EMPTY_PATTERN)
_FLAT: Final = rb"(?:" + _SCALAR_PATTERN + rb"|" + _EMPTY_PATTERN + rb")" + _WS + rb"," + _WS
_KEY_PATTERN: Final = _TEXT + _WS + rb":" + _WS
_OPENERS: Final = re.compile(
    rb"(?:\[" + _WS + rb"(?:" + _FLAT + rb")*+"
    rb"|\{" + _WS + _KEY_PATTERN + rb"(?:" + _FLAT + _KEY_PATTERN + rb")*+)++"
)
"""A run of containers opened one inside the other, each with its first members when
they hold no array or object that is not empty (``[1,[{"a":0,"b":[``): deep nesting
is read a run at a time, not a bracket at a time (possessive repeats: about ten times
quicker than backtracking ones over long runs)."""
_CLOSERS: Final = re.compile(rb"[\]}](?:" + _WS + rb"[\]}])*+")
_KEY: Final = re.compile(b"(" + _TEXT + b")" + _WS + b":" + _WS)
_SPACES: Final = b" \t\n\r"
_OPENED: Final = bytes.maketrans(b"]}", b"[{")
_NOT_OPENERS: Final = bytes(b for b in range(256) if b not in b"[{")
_OBJECT: Final = ord("{")


def outline(line: bytes) -> Outline:
    """Read ``line``, which may nest arrays and objects to any depth, as strict JSON
    without recursion.

    Raises ``UnicodeDecodeError`` (not UTF-8) or another ``ValueError`` (not JSON, an
    unclosed array or object among them). For the lines :func:`load_strict` refuses
    as :class:`TooDeep`: it costs a regular-expression match per run of brackets and
    per scalar, and memory of the order of the line's size.
    """
    line.decode("utf-8")  # strict: surrogates encoded in UTF-8 are refused too
    pos = _space(line, 0)
    if not line.startswith(b"{", pos):
        end, _ = _skip_value(line, pos)
        _expect_end(line, end)
        return Outline([] if line.startswith(b"[", pos) else json.loads(line), None)
    members: dict[str, object] = {}
    depths: dict[str, int] = {}
    pos = _space(line, pos + 1)
    if line.startswith(b"}", pos):
        _expect_end(line, pos + 1)
        return Outline(members, None)
    while True:
        key = _KEY.match(line, pos)
        if key is None:
            raise _not_json(line, pos)
        name = json.loads(key.group(1))
        start = key.end()
        scalar = _SCALAR.match(line, start)
        if scalar is not None:
            members[name] = json.loads(scalar.group())
            depths.pop(name, None)
            pos = scalar.end()
        else:
            pos, depths[name] = _skip_value(line, start)
            members[name] = {} if line[start] == _OBJECT else []
        pos = _space(line, pos)
        if line.startswith(b",", pos):
            pos = _space(line, pos + 1)
            continue
        if line.startswith(b"}", pos):
            _expect_end(line, pos + 1)
            deepest = max(depths, key=depths.__getitem__) if depths else None
            return Outline(members, deepest)
        raise _not_json(line, pos)


def _skip_value(line: bytes, pos: int) -> tuple[int, int]:
    """Where the JSON value at ``pos`` ends, and how deeply it nests; a ``ValueError``
    when there is none. Should its last run of closing brackets close one container more
    (the object holding the value), the value ends before that bracket."""
    stack = bytearray()  # b"[" or b"{" per open container
    depth = 0
    while True:  # a value starts at pos
        opened = _OPENERS.match(line, pos)
        if opened is not None:
            run = opened.group()
            stack += _EMPTY.sub(b"", _STRING.sub(b"", run)).translate(None, _NOT_OPENERS)
            depth = max(depth, len(stack))
            pos = opened.end()
            if not (line.startswith(b"]", pos) and run.rstrip(_SPACES).endswith(b"[")):
                continue
            # an empty array closing the run: the closing run below reads its bracket
        else:
            scalar = _EMPTY.match(line, pos) or _SCALAR.match(line, pos)
            if scalar is None:
                raise _not_json(line, pos)
            pos = scalar.end()
        while True:  # a value ended at pos
            if not stack:
                return pos, depth
            pos = _space(line, pos)
            closed = _CLOSERS.match(line, pos)
            if closed is not None:
                run = closed.group()
                closers = run.translate(_OPENED, _SPACES)
                spill = len(closers) - len(stack)
                if spill > 1:
                    raise _not_json(line, pos)
                if spill == 1:  # the last bracket closes what holds this value
                    closers = closers[:-1]
                    run = run[:-1].rstrip(_SPACES)
                if stack[-len(closers) :] != closers[::-1]:
                    raise _not_json(line, pos)
                del stack[-len(closers) :]
                pos += len(run)
                continue
            if not line.startswith(b",", pos):
                raise _not_json(line, pos)
            pos = _space(line, pos + 1)
            if stack[-1] == _OBJECT:
                key = _KEY.match(line, pos)
                if key is None:
                    raise _not_json(line, pos)
                pos = key.end()
            break


def _space(line: bytes, pos: int) -> int:
    return _SPACE.match(line, pos).end()  # type: ignore[union-attr]  # matches ""


def _expect_end(line: bytes, pos: int) -> None:
    if _space(line, pos) != len(line):
        raise _not_json(line, pos)


def _not_json(line: bytes, pos: int) -> ValueError:
    if pos >= len(line):
        return ValueError("the message ends before its arrays and objects are closed")
    return ValueError(f"invalid JSON at byte {pos}")
