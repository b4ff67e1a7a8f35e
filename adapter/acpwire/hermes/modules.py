"""Finding hermes-agent and importing its modules lazily.

Nothing here imports Hermes at module import time: :func:`available` only looks for it
(the backend asks at start-up), and :func:`hermes_module` imports one of Hermes' modules
when a turn or a session needs it, tolerating a Hermes that lacks it.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
from typing import Any

logger = logging.getLogger(__name__)

_MISSING: set[str] = set()


def available() -> bool:
    """Whether hermes-agent is installed here (found, not imported: importing it takes
    seconds, which the first session pays instead)."""
    try:
        return all(importlib.util.find_spec(name) for name in ("run_agent", "hermes_cli"))
    except (ImportError, ValueError):
        return False


def hermes_module(name: str) -> Any:
    """A Hermes module, or None (logged once) when this Hermes lacks it."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        if name not in _MISSING:
            _MISSING.add(name)
            logger.warning(
                "Hermes module %s is unavailable (%s); skipping what needs it", name, exc
            )
        return None
