"""The config home: where acpwire keeps its settings, secrets and session database.

``$ACPWIRE_HOME`` (default ``~/.acpwire``: :mod:`acpwire.config.home`) holds ``config.toml``
(provider, model and defaults), ``.env`` (secrets, loaded into the environment at start
without overriding variables already set) and ``sessions.db``. Environment variables win over the file. The
home is kept 0700 and those files 0600 (:mod:`acpwire.config.private`).
"""

from __future__ import annotations

import logging
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acpwire.config.home import config_home
from acpwire.config.limits import ToolLimits, limits_from_table
from acpwire.config.private import make_private_home, repair_home, write_private

logger = logging.getLogger(__name__)

CONFIG_NAME = "config.toml"
ENV_NAME = ".env"
DB_NAME = "sessions.db"


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the backend reads from the config home, resolved once at start."""

    home: Path
    file_values: dict[str, Any] = field(default_factory=dict)
    """The ``[model]`` table of config.toml (handed to the agent's config resolver)."""
    approval_timeout_s: float = 60.0
    workers: int = 8
    sensitive_paths: tuple[str, ...] = ()
    log_level: str = "INFO"
    db_busy_timeout_ms: int = 5000
    """How long a database call waits for another process's lock before failing."""
    mcp_wait_s: float | None = None
    """How long session set-up waits for MCP servers before answering (the rest join
    later); None: as long as the client waits for the answer, less a margin."""
    env_loaded: bool = False
    env_passthrough: tuple[str, ...] = ()
    """Variables shell commands keep although their names look like secrets."""
    secret_names: tuple[str, ...] = ()
    """The variables the config home's ``.env`` defines: never passed to commands."""
    tools: ToolLimits = field(default_factory=ToolLimits)
    """The ``[tools]`` table: the tools' size and time caps."""

    @property
    def config_file(self) -> Path:
        return self.home / CONFIG_NAME

    @property
    def db_path(self) -> Path:
        return self.home / DB_NAME


class ConfigError(Exception):
    """config.toml exists but cannot be used; the message says where and why."""


def _read_toml(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def _number(table: Mapping[str, Any], key: str, default: float, *, path: Path) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"{path}: {key} must be a positive number, got {value!r}")
    return float(value)


def load_settings(env: Mapping[str, str] | None = None, *, load_env_file: bool = True) -> Settings:
    """Read the config home. Loads ``.env`` into ``os.environ`` (never overriding)."""
    home = config_home(env)
    repair_home(home)  # 0700 / 0600 whatever the umask was: it holds keys and history
    env_file = home / ENV_NAME
    loaded = False
    secret_names: tuple[str, ...] = ()
    if load_env_file and env_file.exists():
        from dotenv import dotenv_values, load_dotenv  # only with a file: costs start-up time

        loaded = load_dotenv(env_file, override=False)
        secret_names = tuple(dotenv_values(env_file))
        logger.info("loaded environment from %s", env_file)
    environ = os.environ if env is None else env
    path = home / CONFIG_NAME
    data = _read_toml(path)
    model = data.get("model", {})
    backend = data.get("backend", {})
    tools = data.get("tools", {})
    if not isinstance(model, dict) or not isinstance(backend, dict) or not isinstance(tools, dict):
        raise ConfigError(f"{path}: [model], [backend] and [tools] must be tables")
    try:
        limits = limits_from_table(tools)
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    sensitive = backend.get("sensitive_paths", [])
    if not isinstance(sensitive, list) or not all(isinstance(p, str) for p in sensitive):
        raise ConfigError(f"{path}: backend.sensitive_paths must be a list of strings")
    passthrough = backend.get("env_passthrough", [])
    if not isinstance(passthrough, list) or not all(isinstance(p, str) for p in passthrough):
        raise ConfigError(f"{path}: backend.env_passthrough must be a list of strings")
    timeout = float(environ.get("ACPWIRE_APPROVAL_TIMEOUT", 0) or 0) or _number(
        backend, "approval_timeout_s", 60.0, path=path
    )
    return Settings(
        home=home,
        file_values=dict(model),
        approval_timeout_s=timeout,
        workers=int(_number(backend, "workers", 8, path=path)),
        db_busy_timeout_ms=int(_number(backend, "db_busy_timeout_ms", 5000, path=path)),
        mcp_wait_s=_number(backend, "mcp_wait_s", 1.0, path=path)
        if "mcp_wait_s" in backend
        else None,
        sensitive_paths=tuple(sensitive),
        log_level=str(environ.get("ACPWIRE_LOG_LEVEL") or backend.get("log_level", "INFO")).upper(),
        env_loaded=bool(loaded),
        env_passthrough=tuple(passthrough),
        secret_names=secret_names,
        tools=limits,
    )


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def write_model_config(home: Path, values: Mapping[str, object]) -> Path:
    """Write (replace) the ``[model]`` table of config.toml, keeping the other tables."""
    make_private_home(home)
    path = home / CONFIG_NAME
    data = _read_toml(path)
    data["model"] = {k: v for k, v in values.items() if v not in (None, "")}
    lines: list[str] = []
    for table, entries in data.items():
        if not isinstance(entries, dict):
            continue
        lines.append(f"[{table}]")
        for key, value in entries.items():
            if isinstance(value, list):
                lines.append(f"{key} = [{', '.join(_toml_value(v) for v in value)}]")
            else:
                lines.append(f"{key} = {_toml_value(value)}")
        lines.append("")
    write_private(path, "\n".join(lines))
    return path
