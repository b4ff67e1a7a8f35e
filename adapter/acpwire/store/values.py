"""How the store writes values into SQLite text columns and reads them back.

Timestamps as fixed-width UTC text (string order is time order), JSON in canonical form
(sorted keys, so equal values compare equal in SQL), and text that SQLite can store as
UTF-8 (a lone UTF-16 surrogate, half an emoji, is escaped or replaced). Pure functions,
no connection.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "dump_json",
    "format_ts",
    "load_json",
    "parse_ts",
    "storable",
    "storable_text",
    "utcnow",
]

_TS_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
_TS_LEN = len("2026-01-01T00:00:00.000000Z")


def utcnow() -> datetime:
    return datetime.now(UTC)


def format_ts(moment: datetime) -> str:
    """Fixed-width UTC text, so that string order in SQL equals time order."""
    if moment.tzinfo is None:
        raise ValueError(f"timestamps must be timezone-aware, got naive {moment!r}")
    return moment.astimezone(UTC).strftime(_TS_FORMAT)


def parse_ts(text: str) -> datetime:
    # fromisoformat reads what format_ts writes ("...T12:34:56.123456Z") 40x faster than
    # strptime; anything else is still parsed strictly by the format.
    if len(text) == _TS_LEN and text[-1] == "Z":
        return datetime.fromisoformat(text)
    return datetime.strptime(text, _TS_FORMAT).replace(tzinfo=UTC)


def storable(text: str) -> bool:
    """Whether SQLite can store ``text`` (no lone UTF-16 surrogate in it)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def storable_text(text: str) -> str:
    """``text`` with any lone UTF-16 surrogate replaced by U+FFFD, for text columns."""
    return text if storable(text) else text.encode("utf-8", "replace").decode("utf-8")


def dump_json(value: object, what: str) -> str:
    """Canonical JSON (sorted keys), so equal values give equal text and can be compared in SQL.

    Text stays readable (non-ASCII as is), except lone UTF-16 surrogates (half an emoji
    from a model or a JavaScript client), which SQLite cannot store as UTF-8: such a
    value is written with ``\\u`` escapes instead, and reads back the same."""
    try:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} is not JSON-serialisable: {exc}") from exc
    if not storable(text):
        return json.dumps(value, sort_keys=True, ensure_ascii=True, allow_nan=False)
    return text


def load_json(text: str) -> Any:  # arbitrary JSON read back from the store
    return json.loads(text)
