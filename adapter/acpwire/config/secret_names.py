"""Which variable and key names look like they hold a credential: the one rule the scrubbed
environment (:mod:`acpwire.config.environment`, what commands and MCP servers may see) and
the tap's trace masking (:mod:`acpwire.cli.tap`) share. Stdlib only."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["looks_secret"]

_SECRET_PARTS: Final = frozenset(
    {
        "KEY", "KEYS", "APIKEY", "TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD",
        "PASSWD", "PASS", "PASSPHRASE", "AUTH", "CREDENTIAL", "CREDENTIALS", "COOKIE",
        "PAT", "PRIVATE", "SIGNATURE", "DSN",
    }
)  # fmt: skip
_SECRET_GLUED: Final = re.compile(r"APIKEY|ACCESSKEY|SECRETKEY|AUTHTOKEN|PASSWORD|SECRET|TOKEN")


def looks_secret(name: str) -> bool:
    """Whether a variable name looks like it holds a credential (case-insensitive): a
    ``_``-separated part such as ``KEY``, ``TOKEN``, ``SECRET``, ``PASSWORD``, ``AUTH``,
    or one of these glued into a longer word (``GITHUBTOKEN``)."""
    upper = name.upper()
    parts = [part for part in re.split(r"[^A-Z0-9]+", upper) if part]
    return any(part in _SECRET_PARTS for part in parts) or _SECRET_GLUED.search(upper) is not None
