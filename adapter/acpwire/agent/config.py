"""What any agent factory reports of its configuration, whatever agent it builds.

:class:`ConfigError`: no usable provider, or settings that cannot be used (raised from a
factory's ``create`` or a user's ``create_agent``: ``session/new`` answers -32000 with
its message and the factory's ``setup_hint``). :class:`ModelList`: the models an
endpoint offers, listed once and kept, for a factory's model picker. The embedded
agent's own settings are :mod:`acpwire.agent.embedded.provider`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["ConfigError", "ModelList"]


class ConfigError(ValueError):
    """The agent configuration is invalid or incomplete."""


class ModelList:
    """The model names an endpoint offers, asked for once and kept (thread-safe).

    Listing waits on the network, so it has a lock of its own: reading the cached list
    (:meth:`cached`) never waits, and :meth:`forget` waits for a listing in flight.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._models: list[str] | None = None

    def get(self, fetch: Callable[[], list[str]]) -> list[str]:
        """The list, from ``fetch`` the first time (callers meanwhile wait for it)."""
        with self._lock:
            if self._models is None:
                self._models = fetch()
            return list(self._models)

    def cached(self) -> list[str] | None:
        """The list if it is known, else None; never waits."""
        models = self._models
        return None if models is None else list(models)

    def seed(self, models: list[str]) -> None:
        """Keep a list another look-up already fetched (unless one is known)."""
        if self._models is None:
            self._models = list(models)

    def forget(self) -> None:
        with self._lock:
            self._models = None
