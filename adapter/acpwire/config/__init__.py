"""The configuration: the config home's settings, and what is decided from them.

- :mod:`~acpwire.config.settings`: the config home's ``config.toml`` and ``.env``
  (:class:`Settings`, :func:`load_settings`, :func:`write_model_config`);
- :mod:`~acpwire.config.limits`: the size and time caps of tools and attachments;
- :mod:`~acpwire.config.private`: the home and its files kept private;
- :mod:`~acpwire.config.paths`: session working directories and tool paths (WSL, URIs);
- :mod:`~acpwire.config.environment`: the scrubbed environment of commands and MCP
  servers (no secrets);
- :mod:`~acpwire.config.logs`: the process's logging, to stderr;
- :mod:`~acpwire.config.home` (where the home is) and :mod:`~acpwire.config.secret_names`
  (which names look like credentials): stdlib leaves, which the tap reads without the
  rest of the configuration.

May import: the stdlib. The names of :mod:`.settings` are importable from here and load
on first use (this file imports nothing else), so a module of the package loads without
the others; the modules here import each other, never this file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acpwire._exports import lazy_exports

if TYPE_CHECKING:
    from acpwire.config.settings import (
        CONFIG_NAME,
        DB_NAME,
        ENV_NAME,
        ConfigError,
        Settings,
        load_settings,
        write_model_config,
    )

_WHERE: dict[str, str] = dict.fromkeys(
    [
        "CONFIG_NAME",
        "DB_NAME",
        "ENV_NAME",
        "ConfigError",
        "Settings",
        "load_settings",
        "write_model_config",
    ],
    "acpwire.config.settings",
)

__all__ = [
    "CONFIG_NAME",
    "DB_NAME",
    "ENV_NAME",
    "ConfigError",
    "Settings",
    "load_settings",
    "write_model_config",
]

__getattr__ = lazy_exports(__name__, _WHERE)
