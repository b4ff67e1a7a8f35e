"""A per-turn cancellation token shared by the chat loop, the model client and the tools.

Each turn gets a fresh token, so cancelling one turn can never leak into the next (the
"sticky interrupt" defect of Hermes). Blocking work registers a callback that unblocks
it (closing a socket, killing a process) instead of polling a flag.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class CancelToken:
    """A thread-safe, one-way cancellation flag with wake-up callbacks."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: dict[int, Callable[[], None]] = {}
        self._next_key = 0

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        """Set the flag and run every registered callback once (later calls do nothing)."""
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks = list(self._callbacks.values())
            self._callbacks.clear()
        for callback in callbacks:
            _run_quietly(callback)

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Register ``callback``; returns a function that unregisters it.

        When the token is already cancelled the callback runs at once.
        """
        with self._lock:
            if not self._event.is_set():
                key = self._next_key
                self._next_key += 1
                self._callbacks[key] = callback

                def unregister() -> None:
                    with self._lock:
                        self._callbacks.pop(key, None)

                return unregister
        _run_quietly(callback)
        return _noop

    def wait(self, timeout: float | None = None) -> bool:
        """Block until cancelled or ``timeout`` elapses; True when cancelled."""
        return self._event.wait(timeout)


def _noop() -> None:
    return None


def _run_quietly(callback: Callable[[], None]) -> None:
    # A failing wake-up callback must not stop the others from running.
    try:
        callback()
    except Exception:
        log.exception("cancel callback failed")
