"""Completing the agent configuration in the background: start-up never waits on the network.

When the endpoint or the model is not named, knowing them needs ``GET /models`` (local
discovery, then the first model listed). That answer is not needed for ``initialize``,
only for the first ``session/new``, so :class:`BackgroundLookup` runs it in a daemon
thread started once the ``initialize`` answer is out, and :meth:`BackgroundLookup.result`
waits for it at most ``lookup_timeout`` plus :data:`DISCOVERY_MARGIN_S` seconds. A
model server that accepts connections and never answers (Ollama loading a large model)
thus costs the first ``session/new`` a bounded wait and a clear error, and the next
``session/new`` asks again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from acpwire.agent.config import ConfigError
from acpwire.agent.embedded.provider import AgentConfig

__all__ = ["DISCOVERY_MARGIN_S", "BackgroundLookup", "needs_lookup"]

DISCOVERY_MARGIN_S = 2.0
"""Added to ``lookup_timeout`` for the wait: probing the local candidates (0.5 s each)."""


def needs_lookup(config: AgentConfig) -> bool:
    """Whether the endpoint must be asked before a session can be made."""
    return config.base_url is None or config.model is None


class BackgroundLookup:
    """One look-up at a time in a daemon thread; its result kept once it succeeded."""

    def __init__(self, complete: Callable[[], AgentConfig]) -> None:
        self._complete = complete
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._config: AgentConfig | None = None
        self._error: ConfigError | None = None

    def start(self) -> None:
        """Begin the look-up unless it runs or has succeeded (a failed one is retried)."""
        with self._lock:
            if self._config is not None or (self._thread is not None and self._thread.is_alive()):
                return
            self._error = None
            self._thread = threading.Thread(target=self._run, name="acpwire-models", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        try:
            config = self._complete()
        except ConfigError as exc:
            self._error = exc
        else:
            self._config = config

    @property
    def done(self) -> AgentConfig | None:
        """The completed configuration if the look-up succeeded; never waits."""
        return self._config

    def result(self, wait_s: float, *, endpoint: str | None) -> AgentConfig:
        """The completed configuration, waiting at most ``wait_s`` seconds for it.

        Raises :class:`ConfigError`: the look-up's own failure, or, when it is still
        waiting on the server, a message naming the endpoint and how to avoid the wait.
        """
        self.start()
        thread = self._thread
        if thread is not None:
            thread.join(wait_s)
        if self._config is not None:
            return self._config
        if thread is not None and thread.is_alive():
            where = f"the model server at {endpoint}" if endpoint else "no local model server"
            raise ConfigError(
                f"{where} has not listed its models within {wait_s:g} s (a server loading "
                "a large model does this); try again in a moment, or name the model "
                "(ACPWIRE_MODEL, or model in config.toml) to start without asking it"
            )
        raise self._error or ConfigError("the model look-up failed")

    def forget(self) -> None:
        """Drop a completed result (after ``--setup`` or ``logout``); the next start asks anew."""
        with self._lock:
            self._config, self._error = None, None
