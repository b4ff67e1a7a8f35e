"""Which endpoint, key and model the embedded default agent uses.

Precedence is defaults < config-file values < environment. The config file itself is
read by the backend and handed in as a mapping of the agent's keys. When no endpoint
is configured, :func:`discover_local_server` probes the usual local model servers;
when no model is configured, :func:`pick_default_model` takes the first one listed.
Every problem raises :class:`~acpwire.agent.config.ConfigError`.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from acpwire.agent.config import ConfigError

__all__ = [
    "ENV_KEYS",
    "LOCAL_SERVERS",
    "AgentConfig",
    "complete_config",
    "discover_local_server",
    "pick_default_model",
    "resolve_config",
]

log = logging.getLogger(__name__)

LOCAL_SERVERS: tuple[str, ...] = (
    "http://127.0.0.1:11434/v1",  # Ollama
    "http://127.0.0.1:8080/v1",  # llama.cpp server
    "http://127.0.0.1:1234/v1",  # LM Studio
)

ENV_KEYS: Mapping[str, str] = {
    "OPENAI_BASE_URL": "base_url",
    "OPENAI_API_KEY": "api_key",
    "ACPWIRE_MODEL": "model",
}


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """Settings of the default agent; ``None`` means "not configured"."""

    provider: str = "custom"
    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None
    max_iterations: int = 40
    context_window: int = 32768
    request_timeout: float = 600.0
    temperature: float | None = None
    lookup_timeout: float = 5.0
    """How long listing an endpoint's models may take (the first ``session/new`` waits
    for it when the model or the endpoint is not named: see ``acpwire.agent.embedded.lookup``)."""


_FIELD_TYPES: Mapping[str, tuple[type, ...]] = {
    "provider": (str,),
    "base_url": (str,),
    "api_key": (str,),
    "model": (str,),
    "max_iterations": (int,),
    "context_window": (int,),
    "request_timeout": (int, float),
    "temperature": (int, float),
    "lookup_timeout": (int, float),
}


def resolve_config(
    env: Mapping[str, str], file_values: Mapping[str, object] | None = None
) -> AgentConfig:
    """Build an :class:`AgentConfig` from config-file values, then the environment.

    Unknown keys and values of the wrong type raise :class:`ConfigError`.
    """
    values: dict[str, object] = {}
    for key, value in (file_values or {}).items():
        values[key] = _check_field(key, value, source="config file")
    for env_name, key in ENV_KEYS.items():
        raw = env.get(env_name, "").strip()
        if raw:
            values[key] = raw
    config = AgentConfig(**values)  # type: ignore[arg-type]  # keys and types checked above
    if config.base_url is not None:
        config = dataclasses.replace(config, base_url=config.base_url.rstrip("/"))
    if config.max_iterations < 1:
        raise ConfigError("max_iterations must be at least 1")
    if config.context_window < 1024:
        raise ConfigError("context_window must be at least 1024 tokens")
    if config.request_timeout <= 0:
        raise ConfigError("request_timeout must be positive")
    if config.lookup_timeout <= 0:
        raise ConfigError("lookup_timeout must be positive")
    return config


def _check_field(key: str, value: object, *, source: str) -> object:
    types = _FIELD_TYPES.get(key)
    if types is None:
        known = ", ".join(sorted(_FIELD_TYPES))
        raise ConfigError(f"unknown agent setting {key!r} in {source} (known: {known})")
    if value is None and key in ("base_url", "api_key", "model", "temperature"):
        return None
    # bool is an int subclass, but "max_iterations: true" is a mistake, not 1.
    if isinstance(value, bool) or not isinstance(value, types):
        expected = " or ".join(t.__name__ for t in types)
        raise ConfigError(f"agent setting {key!r} in {source} must be {expected}, got {value!r}")
    if key in ("request_timeout", "temperature", "lookup_timeout") and isinstance(
        value, int | float
    ):
        return float(value)
    return value


def discover_local_server(
    candidates: Sequence[str] = LOCAL_SERVERS, *, timeout: float = 0.5
) -> str | None:
    """The first base URL in ``candidates`` that answers ``GET /models`` with a model list."""
    found = _discover(candidates, timeout)
    return None if found is None else found[0]


def _discover(
    candidates: Sequence[str], timeout: float
) -> tuple[str, list[tuple[str, int | None]]] | None:
    """The first candidate listing models, and what it listed (so that picking the
    model does not ask it again)."""
    from acpwire.agent.embedded.listing import list_model_windows  # only when probing
    from acpwire.agent.embedded.stream import ModelError

    for base_url in candidates:
        try:
            entries = list_model_windows(base_url, None, timeout=timeout)
        except ModelError as exc:
            log.debug("no model server at %s: %s", base_url, exc.message)
            continue
        if entries:
            log.info("found a local model server at %s", base_url)
            return base_url.rstrip("/"), entries
    return None


Listed = Callable[[list[tuple[str, int | None]]], None]
"""Told what an endpoint listed: ``(model id, context window or None)`` in its order."""


def pick_default_model(
    base_url: str, api_key: str | None, *, timeout: float = 5.0, on_listed: Listed | None = None
) -> str:
    """The first model listed by the endpoint; raises :class:`ConfigError` when none."""
    from acpwire.agent.embedded.listing import list_model_windows  # only when probing
    from acpwire.agent.embedded.stream import ModelError

    try:
        entries = list_model_windows(base_url, api_key, timeout=timeout)
    except ModelError as exc:
        raise ConfigError(
            f"cannot list the models of {base_url}: {exc.message}; name the model "
            "(ACPWIRE_MODEL, or model in config.toml) to start without asking the endpoint"
        ) from exc
    return _first_listed(base_url, entries, on_listed)


def _first_listed(
    base_url: str, entries: list[tuple[str, int | None]], on_listed: Listed | None
) -> str:
    if on_listed is not None:
        on_listed(entries)
    if not entries:
        raise ConfigError(f"the model server at {base_url} lists no models; set ACPWIRE_MODEL")
    return entries[0][0]


def complete_config(
    config: AgentConfig,
    *,
    candidates: Sequence[str] = LOCAL_SERVERS,
    on_listed: Listed | None = None,
) -> AgentConfig:
    """Fill in a missing endpoint (local discovery) and model (first listed).

    Waits on the network (``config.lookup_timeout`` per request, at most half a second
    per local candidate). Raises :class:`ConfigError` when no endpoint can be found.
    """
    base_url = config.base_url
    if base_url is None:
        found = _discover(candidates, timeout=min(0.5, config.lookup_timeout))
        if found is None:
            tried = ", ".join(candidates)
            raise ConfigError(
                f"no model endpoint configured (set OPENAI_BASE_URL) and none answered at {tried}"
            )
        base_url, entries = found
        model = config.model or _first_listed(base_url, entries, on_listed)
        return dataclasses.replace(config, base_url=base_url, model=model)
    model = config.model or pick_default_model(
        base_url, config.api_key, timeout=config.lookup_timeout, on_listed=on_listed
    )
    return dataclasses.replace(config, base_url=base_url, model=model)
