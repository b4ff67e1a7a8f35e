"""Hermes' compaction summaries among stored messages, marked on replay as Hermes marks
them (``_meta.hermes.compactionSummary`` / ``containsCompactionSummary``).

Hermes stores a summary as an ordinary message: standalone (its text starts with the
compressor's prefix; user or assistant role) or merged after the real content of the
first kept message (behind a delimiter). The in-process flag ``_compressed_summary``
marks standalone ones until the message is reloaded from a database.
"""

from __future__ import annotations

from typing import Any, Literal

from acpwire.hermes.modules import hermes_module

__all__ = ["summary_kind", "summary_meta"]

_FLAG = "_compressed_summary"
# Hermes 0.19.0's texts, used when its compressor module cannot be read.
_PREFIXES = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:")
_DELIMITER = "[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]"


def _markers() -> tuple[tuple[str, ...], str]:
    compressor = hermes_module("agent.context_compressor")
    if compressor is None:
        return _PREFIXES, _DELIMITER
    found = tuple(
        p
        for p in (
            getattr(compressor, "SUMMARY_PREFIX", None),
            getattr(compressor, "LEGACY_SUMMARY_PREFIX", None),
        )
        if isinstance(p, str) and p
    )
    delimiter = getattr(compressor, "_MERGED_SUMMARY_DELIMITER", _DELIMITER)
    return found or _PREFIXES, delimiter if isinstance(delimiter, str) else _DELIMITER


def summary_kind(message: dict[str, Any], text: str) -> Literal["standalone", "merged"] | None:
    """Whether ``message`` (with replayed text ``text``) is a whole summary, real content
    followed by a summary, or neither."""
    prefixes, delimiter = _markers()
    body = text.lstrip()
    if body.startswith(prefixes):
        return "standalone"
    if delimiter in text or any(p in text for p in prefixes):
        return "merged"
    return "standalone" if message.get(_FLAG) else None


def summary_meta(message: dict[str, Any], text: str) -> dict[str, Any] | None:
    """The replayed chunk's ``_meta`` for a summary (Hermes' keys), else None."""
    kind = summary_kind(message, text)
    if kind == "standalone":
        return {"hermes": {"compactionSummary": True}}
    if kind == "merged":
        return {"hermes": {"containsCompactionSummary": True}}
    return None
