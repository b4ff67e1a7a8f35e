"""The factory of the embedded default agent: the built-in ``default`` registration
(``acpwire.hermes.factory`` has Hermes' one; ``acpwire.server.choice`` picks).

It implements the full :class:`~acpwire.agent.factory.AgentFactory`: one agent per
session, whether a model provider is configured at all (so ``session/new`` can answer
"authentication required" instead of failing later) and which models the endpoint
offers (for the model picker).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING

from acpwire.agent.config import (
    AgentConfig,
    ConfigError,
    ModelList,
    complete_config,
    resolve_config,
)
from acpwire.limits import ToolLimits

if TYPE_CHECKING:
    from acpwire.agent.seam import SyncAgent
    from acpwire.config import Settings

__all__ = ["DefaultAgentFactory"]

logger = logging.getLogger(__name__)


class DefaultAgentFactory:
    """Builds :class:`DefaultAgent` instances from the config home and the environment."""

    name = "acpwire default agent"
    setup_hint = "Run `acpwire --setup`, or set OPENAI_BASE_URL and ACPWIRE_MODEL."

    def __init__(
        self,
        file_values: Mapping[str, object],
        env: Mapping[str, str] | None = None,
        *,
        limits: ToolLimits | None = None,
    ) -> None:
        self._file_values = dict(file_values)
        self._limits = limits or ToolLimits()
        self._env = os.environ if env is None else env
        self._lock = threading.Lock()
        self._config: AgentConfig | None = None
        self._problem: str | None = None
        self._models = ModelList()

    @classmethod
    def from_settings(cls, settings: Settings) -> DefaultAgentFactory:
        """The factory of the config home's ``[model]`` table (``--agent default``)."""
        return cls(settings.file_values, limits=settings.tools)

    def _resolve(self) -> AgentConfig | None:
        with self._lock:
            if self._config is not None:
                return self._config
            try:
                self._config = complete_config(resolve_config(self._env, self._file_values))
                self._problem = None
            except ConfigError as exc:
                self._problem = str(exc)
                logger.warning("no usable model provider: %s", exc)
            return self._config

    def configured(self) -> bool:
        """Whether an endpoint and a model are known (may probe loopback servers once)."""
        return self._resolve() is not None

    @property
    def problem(self) -> str | None:
        """Why no provider is usable, after :meth:`configured` returned False."""
        return self._problem

    def reset(self) -> None:
        """Forget the resolved configuration (after ``--setup`` or ``logout``)."""
        with self._lock:
            self._config, self._problem = None, None
        self._models.forget()

    @property
    def provider(self) -> str:
        config = self._resolve()
        return config.provider if config else "none"

    def available_models(self) -> list[str]:
        """Models the endpoint lists (cached; empty when it cannot be asked)."""
        config = self._resolve()
        if config is None or config.base_url is None:
            return []
        base_url = config.base_url

        def fetch() -> list[str]:
            from acpwire.agent.llm import list_models
            from acpwire.agent.stream import ModelError

            try:
                return list_models(base_url, config.api_key, timeout=5.0)
            except ModelError as exc:
                logger.info("cannot list models of %s: %s", base_url, exc.message)
                return []

        return self._models.get(fetch)

    def planned_model(self, model: str | None) -> str | None:
        """``model`` or the configured one: the embedded agent needs nothing else, so a
        new session answers before the agent (and its HTTP client) is built."""
        config = self._resolve()
        if config is None:
            return None
        return model or config.model

    def cached_models(self) -> list[str] | None:
        """The listed models if :meth:`available_models` already ran, else None."""
        return self._models.cached()

    def reachable(self) -> str | None:
        """None when the endpoint answers its model list; else why it does not."""
        config = self._resolve()
        if config is None or config.base_url is None:
            return self._problem or "no model endpoint configured"
        from acpwire.agent.llm import list_models
        from acpwire.agent.stream import ModelError

        try:
            list_models(config.base_url, config.api_key, timeout=5.0)
        except ModelError as exc:
            return f"cannot reach the model server at {config.base_url}: {exc.message}"
        return None

    def create(
        self, session_id: str, cwd: str, model: str | None, internal_id: str | None = None
    ) -> SyncAgent:
        config = self._resolve()
        if config is None:
            raise ConfigError(self._problem or "no model provider configured")
        if model:
            config = dataclasses.replace(config, model=model)
        from acpwire.agent.default import DefaultAgent  # the HTTP client loads with the first agent

        return DefaultAgent(config, internal_id=internal_id, limits=self._limits)
