"""Where the config home is: ``$ACPWIRE_HOME``, default ``~/.acpwire``. Stdlib only, so
that commands which need no settings (the tap, for its traces) find it without loading
the configuration (:mod:`acpwire.config` reads what is in it)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["HOME_ENV", "config_home"]

HOME_ENV = "ACPWIRE_HOME"


def config_home(env: Mapping[str, str] | None = None) -> Path:
    """The config home ``env`` (default: this process's environment) names."""
    env = os.environ if env is None else env
    raw = env.get(HOME_ENV, "").strip()
    return Path(raw).expanduser() if raw else Path.home() / ".acpwire"
