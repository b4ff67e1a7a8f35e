"""Text helpers for rendering tool calls: truncation, Markdown fences, lenient JSON.

Everything here is total: any input gives a string or a dict, never an exception,
because a rendering failure must not cost the client its ``tool_call_update``.
"""

from __future__ import annotations

import json
import re
from typing import Any

_BACKTICK_RUN = re.compile(r"`+")
_NOTE_ROOM = 100


def truncate(text: str, limit: int = 5000) -> str:
    """``text`` when it fits in ``limit``; else its first ``limit - 100`` chars and a note.

    The note (``"\\n... (N chars total, truncated)"``) fits in the 100 chars kept free,
    so the result never exceeds ``limit`` for any realistic length.
    """
    if len(text) <= limit:
        return text
    return f"{text[: max(0, limit - _NOTE_ROOM)]}\n... ({len(text)} chars total, truncated)"


def one_line(text: str, limit: int) -> str:
    """``text`` on one line (whitespace collapsed), at most ``limit`` chars with ``...``."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return flat[: max(0, limit - 3)] + "..."


def fence(text: str, language: str = "") -> str:
    """``text`` in a Markdown code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}{language}\n{text}\n{marks}"


def fenced_within(text: str, limit: int, language: str = "", header: str = "") -> str:
    """``header`` plus ``text`` fenced, the whole at most ``limit`` chars.

    The body is truncated first so the fence always stays closed.
    """
    prefix = f"{header}\n\n" if header else ""
    overhead = len(fence("", language)) + len(prefix)
    # A truncated body can only contain fewer backticks, so the fence never grows.
    body = truncate(text, max(0, limit - overhead))
    return prefix + fence(body, language)


def jsonable(value: object) -> Any:
    """``value`` if it serializes as JSON, else its ``repr`` (never raises)."""
    try:
        json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        return repr(value)
    return value


def coerce_args(raw: object) -> dict[str, Any]:
    """Tool-call arguments as a dict, whatever the model or the history stored.

    A dict is returned as is, a JSON object string is parsed, ``None`` and blank
    strings give ``{}``, anything else is kept under ``"raw"``.
    """
    if isinstance(raw, dict):
        return raw
    if raw is None:
        return {}
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        try:
            parsed = json.loads(raw)
        except (json.JSONDecodeError, RecursionError):
            return {"raw": raw}
        return parsed if isinstance(parsed, dict) else {"raw": raw}
    return {"raw": jsonable(raw)}


def parse_json(text: str) -> object | None:
    """The first JSON value in ``text`` (a trailing hint after it is allowed), or None."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return None
    try:
        value: object = json.JSONDecoder().raw_decode(stripped)[0]
    except (json.JSONDecodeError, RecursionError):
        return None
    return value


def parse_json_object(text: str) -> dict[str, Any] | None:
    """Like :func:`parse_json`, but only a JSON object counts."""
    value = parse_json(text)
    return value if isinstance(value, dict) else None


def pretty_json(value: object, limit: int) -> str:
    """``value`` as indented JSON (non-JSON leaves as strings), truncated to ``limit``."""
    try:
        rendered = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        rendered = repr(value)
    return truncate(rendered, limit)


def text_of(value: object) -> str:
    """Text of a value that should be a string: strings as is, others as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def str_arg(args: dict[str, Any], *keys: str) -> str:
    """The first non-blank string (or number) among ``args[key]``, stripped; else ``""``."""
    for key in keys:
        value = args.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, (str, int, float)) and str(value).strip():
            return str(value).strip()
    return ""
