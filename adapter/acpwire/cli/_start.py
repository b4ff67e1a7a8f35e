"""What the commands that need the backend do first: check that the ``backend`` extra is
installed, read the configuration, set up logging (to stderr)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acpwire.config import Settings

__all__ = ["BACKEND_MODULES", "backend_installed", "backend_settings", "missing_backend"]

BACKEND_MODULES = {"httpx": "httpx", "mcp": "mcp", "dotenv": "python-dotenv"}
"""The backend's own dependencies (the ``backend`` extra): module -> distribution."""


def missing_backend() -> list[str]:
    """The distributions of the ``backend`` extra that are not installed (found, not
    imported: they load on first use)."""
    import importlib.util

    return [
        dist for module, dist in BACKEND_MODULES.items() if not importlib.util.find_spec(module)
    ]


def backend_installed() -> bool:
    """Whether the backend can run here; if not, says so on stderr."""
    missing = missing_backend()
    if missing:
        print(
            f"acpwire: the backend needs {', '.join(missing)}, which this install lacks:"
            " pip install 'acpwire[backend]'",
            file=sys.stderr,
        )
    return not missing


def backend_settings(log_level: str | None) -> Settings | int:
    """The settings, logging set up at ``log_level`` (else the configured level); or the
    exit code (2) when the backend is not installed or the configuration is broken."""
    if not backend_installed():
        return 2
    from acpwire.config import ConfigError, load_settings
    from acpwire.config.logs import setup_logging

    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"acpwire: configuration error: {exc}", file=sys.stderr)
        return 2
    setup_logging(log_level or settings.log_level)
    return settings
