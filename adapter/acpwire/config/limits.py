"""The size and time caps of the embedded agent's tools and of a prompt's attachments.

Set in the ``[tools]`` table of config.toml (docs/SECURITY.md, "Bounded tools"); this
module imports only the stdlib so the tools, the search worker and the config loader can
all share it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

__all__ = ["ToolLimits", "limits_from_table"]


@dataclass(frozen=True, slots=True)
class ToolLimits:
    max_file_bytes: int = 8 * 1024 * 1024
    """The largest file ``read_file`` reads and ``search_files`` searches (larger ones are
    refused, or skipped by a search), and the largest text ``write_file`` or ``patch``
    may produce."""
    max_result_chars: int = 256 * 1024
    """The most text one ``read_file`` or ``search_files`` result hands the model."""
    search_timeout_s: float = 30.0
    """A content search is stopped (its worker process killed) after this long."""
    max_attachments_bytes: int = 2 * 1024 * 1024
    """The total of the files, images and embedded resources inlined from one prompt."""


def limits_from_table(table: dict[str, Any]) -> ToolLimits:
    """The limits a ``[tools]`` table sets; raises ValueError naming a bad key or value."""
    known = {f.name: f for f in fields(ToolLimits)}
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in known:
            raise ValueError(f"unknown key tools.{key} (known: {', '.join(known)})")
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ValueError(f"tools.{key} must be a positive number, got {value!r}")
        values[key] = float(value) if key == "search_timeout_s" else int(value)
    return ToolLimits(**values)
