""":class:`HermesAgentFactory`: one :class:`~acpwire.hermes.agent.HermesAgent` per session,
configured from Hermes' own files (``$HERMES_HOME/config.yaml`` and ``.env``) as
``hermes-acp`` does.

Hermes is imported on first use, never at import time; a Hermes that is missing or has
no usable provider is reported through :attr:`HermesAgentFactory.problem` and a
:class:`~acpwire.agent.config.ConfigError` from :meth:`HermesAgentFactory.create`.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import threading
from typing import Any

from acpwire.agent.config import ConfigError, ModelList
from acpwire.agent.extras import SetupMethod
from acpwire.config import Settings
from acpwire.config.limits import ToolLimits
from acpwire.hermes.agent import HermesAgent, provider_runtime, split_model_choice
from acpwire.hermes.approvals import HermesAllowlist
from acpwire.hermes.catalog import HermesCatalog, open_state_db
from acpwire.hermes.modules import hermes_module

logger = logging.getLogger(__name__)

TOOLSET = "hermes-acp"
_SETUP_HINT = "run `hermes model` (Hermes reads $HERMES_HOME/config.yaml, default ~/.hermes)"


class HermesAgentFactory:
    """Builds a :class:`HermesAgent` per session from Hermes' own configuration
    (``$HERMES_HOME/config.yaml`` and ``.env``), as ``hermes-acp`` does."""

    name = "Hermes AIAgent"
    setup_hint = "Run `hermes model` to choose Hermes' provider and model."
    setup_method = SetupMethod(
        "hermes-setup",
        "Configure Hermes provider",
        "Choose Hermes' provider and model (Hermes' own `hermes model`).",
        ["--hermes-setup"],
        "hermes model",
    )
    """The terminal auth method: ``acpwire --hermes-setup`` runs ``hermes model``."""
    session_provenance = True
    """Sessions carry ``_meta.hermes.sessionProvenance``: Hermes' compression chain."""
    any_model_id = True
    """``session/set_model`` and the model picker take what ``/model`` takes: any id
    Hermes' ``switch_model`` accepts, ``provider:model`` included (it refuses the rest)."""

    def __init__(self, limits: ToolLimits | None = None) -> None:
        self._limits = limits or ToolLimits()
        self._lock = threading.Lock()
        self._runtime: dict[str, Any] | None = None
        self._problem: str | None = None
        self._models = ModelList()
        self._mcp_discovered = False
        self._catalog = HermesCatalog(open_state_db)
        self._allowlist = HermesAllowlist()

    @classmethod
    def from_settings(cls, settings: Settings) -> HermesAgentFactory:
        """The factory with the ``[tools]`` caps of config.toml (Hermes' file and search
        tools run as acpwire's: the same bounds hold)."""
        return cls(settings.tools)

    @staticmethod
    def agent_identity() -> tuple[str, str]:
        """("Hermes Agent", its version), for ``agentInfo`` and ``/version``."""
        cli = hermes_module("hermes_cli")
        return "Hermes Agent", str(getattr(cli, "__version__", "") or "unknown")

    def title_for(self, session_id: str, user_text: str, answer_text: str) -> str | None:
        """A title from Hermes' title generator (``auxiliary.title_generation``, on
        unless Hermes' config turns it off), stored in state.db as Hermes stores its
        own (a taken title gets a ``#N``); None when Hermes made none."""
        generator = hermes_module("agent.title_generator")
        db = self._session_db()
        if generator is None or db is None:
            return None
        titles: list[str] = []
        generator.auto_title_session(
            db, session_id, user_text, answer_text, title_callback=titles.append
        )
        return titles[0] if titles else None

    def shared_approvals(self) -> HermesAllowlist:
        """Hermes' command_allowlist, kept beside acpwire's remembered approvals."""
        return self._allowlist

    def session_catalog(self) -> HermesCatalog:
        """Hermes' state.db, the store of record of the sessions (the server keeps it in
        step; every ``AIAgent`` writes its messages there)."""
        return self._catalog

    @staticmethod
    def _model_config() -> tuple[str, str | None]:
        """(default model, configured provider) from Hermes' config.yaml."""
        config = importlib.import_module("hermes_cli.config").load_config()
        section = config.get("model")
        if isinstance(section, dict):
            provider = section.get("provider")
            return str(section.get("default") or ""), str(provider) if provider else None
        return (section.strip() if isinstance(section, str) else ""), None

    def _resolve(self) -> dict[str, Any] | None:
        with self._lock:
            if self._runtime is None:
                try:
                    _, provider = self._model_config()
                    resolve = importlib.import_module("hermes_cli.runtime_provider")
                    runtime = dict(resolve.resolve_runtime_provider(requested=provider))
                except ImportError as exc:
                    self._problem = f"hermes-agent is not importable here ({exc})"
                    return None
                except Exception as exc:
                    self._problem = f"Hermes has no usable provider ({exc}); {_SETUP_HINT}"
                    return None
                key = runtime.get("api_key")
                if not (callable(key) or (isinstance(key, str) and key.strip())):
                    name = runtime.get("provider")
                    self._problem = f"Hermes provider {name!r} has no API key; {_SETUP_HINT}"
                    return None
                self._runtime, self._problem = runtime, None
            return self._runtime

    def configured(self) -> bool:
        return self._resolve() is not None

    def provider_hint(self) -> str | None:
        """Hermes' provider comes from its files (no network): as :meth:`configured`."""
        return self.provider if self.configured() else None

    def start_lookup(self) -> None:
        """Nothing to look up: Hermes resolves its provider from its files."""

    @property
    def problem(self) -> str | None:
        return self._problem

    @property
    def provider(self) -> str:
        runtime = self._resolve()
        return str(runtime.get("provider") or "hermes") if runtime else "none"

    def reset(self) -> None:
        with self._lock:
            self._runtime, self._problem = None, None
        self._models.forget()

    def available_models(self) -> list[str]:
        """The configured model, plus what a ``custom`` endpoint lists (cached)."""
        runtime = self._resolve()
        if runtime is None:
            return []

        def fetch() -> list[str]:
            models = [m for m in [self._model_config()[0]] if m]
            provider = runtime.get("provider")
            key, base_url = runtime.get("api_key"), runtime.get("base_url")
            listed: list[str] = []
            if provider == "custom" and isinstance(base_url, str):
                from acpwire.agent.embedded.listing import list_models

                with contextlib.suppress(Exception):
                    listed = list_models(base_url, key if isinstance(key, str) else None)
            elif provider:  # Hermes' catalogue for the provider (live where it can ask)
                with contextlib.suppress(Exception):
                    catalogue = importlib.import_module("hermes_cli.models")
                    listed = [str(m) for m, _ in catalogue.curated_models_for_provider(provider)]
            return models + [m for m in listed if m not in models]

        return self._models.get(fetch)

    def planned_model(self, model: str | None) -> str | None:
        """None: Hermes checks its configuration when the agent is built, and session/new
        should report those errors, so its sessions build the agent at once."""
        return None

    def cached_models(self) -> list[str] | None:
        """The listed models if :meth:`available_models` already ran, else None."""
        return self._models.cached()

    def _mcp_toolsets(self) -> list[str]:
        """``mcp-<name>`` toolsets of config.yaml's MCP servers, discovered once."""
        config = importlib.import_module("hermes_cli.config").load_config()
        servers = config.get("mcp_servers") or {}
        names = [
            str(name)
            for name, cfg in servers.items()
            if not isinstance(cfg, dict) or cfg.get("enabled", True) is not False
        ]
        if names and not self._mcp_discovered:
            self._mcp_discovered = True
            try:
                importlib.import_module("tools.mcp_tool").discover_mcp_tools()
            except Exception as exc:
                logger.warning("Hermes MCP discovery failed: %s", exc)
        return [f"mcp-{name}" for name in names]

    def _session_db(self) -> Any:
        try:
            return self._catalog.db()
        except Exception as exc:  # the session goes on with acpwire's database only
            logger.warning("Hermes' state.db cannot be opened: %s", exc)
            return None

    def create(
        self, session_id: str, cwd: str, model: str | None, internal_id: str | None = None
    ) -> HermesAgent:
        runtime = self._resolve()
        if runtime is None:
            raise ConfigError(self._problem or "Hermes has no provider configured")
        default_model, _ = self._model_config()
        home = str(runtime.get("provider") or "")
        # A stored ``provider:model`` (the session moved to another provider) restores it.
        provider, model = split_model_choice(model or default_model, home)
        if provider != home:
            try:
                runtime = provider_runtime(provider)
            except Exception as exc:
                raise ConfigError(f"Hermes cannot use provider {provider!r}: {exc}") from exc
        db = self._session_db()
        if internal_id and db is not None:
            self._catalog.resume(internal_id)
        kwargs: dict[str, Any] = {
            "platform": "acp",
            "quiet_mode": True,
            "enabled_toolsets": [TOOLSET, *self._mcp_toolsets()],
            # Hermes keys its state by this id: a restored session resumes its internal one.
            "session_id": internal_id or session_id,
            "model": model,
            # Hermes appends the messages there itself and rotates its session on
            # compression, as under hermes-acp.
            "session_db": db,
            "args": list(runtime.get("args") or []),
            **{
                k: runtime.get(k)
                for k in ("provider", "api_mode", "base_url", "api_key", "command")
            },
        }
        try:
            agent = importlib.import_module("run_agent").AIAgent(**kwargs)
        except (ValueError, RuntimeError) as exc:  # e.g. a context window under 64K tokens
            raise ConfigError(f"Hermes cannot start a session: {exc}") from exc
        return HermesAgent(
            agent, task_id=session_id, cwd=cwd, home_provider=home, limits=self._limits
        )
