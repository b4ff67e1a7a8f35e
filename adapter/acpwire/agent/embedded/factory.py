"""The factory of the embedded default agent: the built-in ``default`` registration
(``acpwire.hermes.factory`` has Hermes' one; ``acpwire.server.process.choice`` picks).

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

from acpwire.agent.config import ConfigError, ModelList
from acpwire.agent.embedded.lookup import DISCOVERY_MARGIN_S, BackgroundLookup, needs_lookup
from acpwire.agent.embedded.provider import AgentConfig, complete_config, resolve_config
from acpwire.config.limits import ToolLimits

if TYPE_CHECKING:
    from acpwire.agent.seam import SyncAgent
    from acpwire.config import Settings

__all__ = ["DefaultAgentFactory"]

logger = logging.getLogger(__name__)


class DefaultAgentFactory:
    """Builds :class:`DefaultAgent` instances from the config home and the environment.

    What configuration alone says (the endpoint, the model, the provider name) is known
    at once; what needs the endpoint (local discovery, the first model listed, context
    windows) comes from a :class:`~acpwire.agent.embedded.lookup.BackgroundLookup` begun by
    :meth:`start_lookup` once ``initialize`` is answered.
    """

    name = "acpwire default agent"
    setup_hint = "Run `acpwire --setup`, or set OPENAI_BASE_URL and ACPWIRE_MODEL."
    session_provenance = True
    """Sessions carry ``_meta.hermes.sessionProvenance``: the embedded agent keeps the
    same chain of internal ids across compressions as Hermes does."""

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
        self._base: AgentConfig | None = None
        self._base_problem: str | None = None
        self._lookup: BackgroundLookup | None = None
        self._problem: str | None = None
        self._models = ModelList()
        self._windows: dict[str, int] = {}
        """Context windows the endpoint reported, by model id."""

    def _static(self) -> AgentConfig | None:
        """The configuration files and environment say, without the network (cached)."""
        with self._lock:
            if self._base is None and self._base_problem is None:
                try:
                    self._base = resolve_config(self._env, self._file_values)
                except ConfigError as exc:
                    self._base_problem = str(exc)
                    logger.warning("invalid model configuration: %s", exc)
            return self._base

    def _listed(self, entries: list[tuple[str, int | None]]) -> None:
        self._models.seed([name for name, _ in entries])
        self._windows.update({name: size for name, size in entries if size})

    def _background(self, base: AgentConfig) -> BackgroundLookup:
        with self._lock:
            if self._lookup is None:
                self._lookup = BackgroundLookup(
                    lambda: complete_config(base, on_listed=self._listed)
                )
            return self._lookup

    @classmethod
    def from_settings(cls, settings: Settings) -> DefaultAgentFactory:
        """The factory of the config home's ``[model]`` table (``--agent default``)."""
        return cls(settings.file_values, limits=settings.tools)

    def _resolve(self) -> AgentConfig | None:
        base = self._static()
        if base is None:
            self._problem = self._base_problem
            return None
        if not needs_lookup(base):
            self._problem = None
            return base
        wait_s = base.lookup_timeout + DISCOVERY_MARGIN_S
        try:
            config = self._background(base).result(wait_s, endpoint=base.base_url)
        except ConfigError as exc:
            if self._problem != str(exc):
                logger.warning("no usable model provider: %s", exc)
            self._problem = str(exc)
            return None
        self._problem = None
        return config

    def start_lookup(self) -> None:
        """Begin the endpoint look-up the configuration needs, if any (never waits)."""
        base = self._static()
        if base is not None and needs_lookup(base):
            self._background(base).start()

    def provider_hint(self) -> str | None:
        """The provider ``initialize`` names: known from the configuration alone (or a
        look-up already done); None when no endpoint is known yet."""
        base = self._static()
        if base is None:
            return None
        if base.base_url is not None:
            return base.provider
        lookup = self._lookup
        return base.provider if lookup is not None and lookup.done is not None else None

    def configured(self) -> bool:
        """Whether an endpoint and a model are known; waits (bounded) for the look-up
        when the configuration does not name both."""
        return self._resolve() is not None

    @property
    def problem(self) -> str | None:
        """Why no provider is usable, after :meth:`configured` returned False."""
        return self._problem

    def reset(self) -> None:
        """Forget the resolved configuration (after ``--setup`` or ``logout``)."""
        with self._lock:
            self._base, self._base_problem, self._lookup = None, None, None
            self._problem = None
        self._models.forget()
        self._windows.clear()

    @property
    def provider(self) -> str:
        base = self._static()
        return base.provider if base else "none"

    def available_models(self) -> list[str]:
        """Models the endpoint lists (cached; empty when it cannot be asked)."""
        config = self._resolve()
        if config is None or config.base_url is None:
            return []
        base_url = config.base_url

        def fetch() -> list[str]:
            from acpwire.agent.embedded.listing import list_model_windows
            from acpwire.agent.embedded.stream import ModelError

            try:
                entries = list_model_windows(
                    base_url, config.api_key, timeout=config.lookup_timeout
                )
            except ModelError as exc:
                logger.info("cannot list models of %s: %s", base_url, exc.message)
                return []
            self._listed(entries)
            return [name for name, _ in entries]

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
        from acpwire.agent.embedded.listing import list_models
        from acpwire.agent.embedded.stream import ModelError

        try:
            list_models(config.base_url, config.api_key, timeout=config.lookup_timeout)
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
        if "context_window" not in self._file_values:
            # What the endpoint reports for the model, when it does (the list is asked
            # for once; agents are built off the event loop, after the session answer).
            self.available_models()
            window = self._windows.get(config.model or "")
            if window is not None and window >= 1024:
                config = dataclasses.replace(config, context_window=window)
        from acpwire.agent.embedded.default import (
            DefaultAgent,  # the HTTP client loads with the first agent
        )

        return DefaultAgent(config, internal_id=internal_id, limits=self._limits)
