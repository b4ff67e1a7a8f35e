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
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Final, NoReturn

from pydantic_core import from_json

__all__ = ["MAX_DEPTH", "TooDeep", "load_strict", "nesting_depth"]

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
