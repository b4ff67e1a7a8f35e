"""The sessions a :class:`~.manager.SessionManager` holds in memory (mixed into it).

Least recently used first: :meth:`OpenSessions.peek` finds one without touching the
database, :meth:`~OpenSessions.unload_idle` forgets the idle ones past the cap (they stay
in the database and are restored on their next use) and hands the freed memory back to
the system, :meth:`~OpenSessions.close` and :meth:`~OpenSessions.cleanup` close them.
"""

from __future__ import annotations

import gc
import logging
import threading
from collections import OrderedDict

from acpwire.server.sessions.state import SessionState

__all__ = ["MAX_OPEN_SESSIONS", "OpenSessions"]

logger = logging.getLogger("acpwire.server.sessions.manager")
"""The manager's logger: what moved here logs as it did before."""

MAX_OPEN_SESSIONS = 32
"""Sessions kept in memory before idle ones are unloaded (they stay in the database)."""


def _release_free_memory() -> None:
    """``malloc_trim(0)`` where the C library has it (glibc): freed memory goes back to
    the system instead of staying in the allocator's per-thread arenas."""
    import ctypes  # loaded when sessions are first unloaded, not at start-up

    try:
        libc = ctypes.CDLL(None)
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


class OpenSessions:
    """The open sessions of a :class:`~.manager.SessionManager`, which sets the
    attributes below."""

    _open: OrderedDict[str, SessionState]
    """Least recently used first."""
    _lock: threading.RLock
    max_open: int

    def peek(self, session_id: str) -> SessionState | None:
        """The session if it is open in memory (no database access)."""
        with self._lock:
            state = self._open.get(session_id)
            if state is not None:
                self._open.move_to_end(session_id)
            return state

    def close(self, session_id: str) -> SessionState | None:
        """Forget an open session (it stays in the database); returns it if it was open."""
        with self._lock:
            state = self._open.pop(session_id, None)
        if state is not None:
            state.agent.close()
        return state

    def unload_idle(self) -> int:
        """Forget the least recently used sessions beyond :attr:`max_open` whose state is
        all in the database (:meth:`SessionState.can_unload`); the most recently used
        half is always kept. A session forgotten is restored on its next use. Called on
        the event loop, where turns start, so none starts on a session being forgotten."""
        with self._lock:
            excess = len(self._open) - self.max_open
            if excess <= 0:
                return 0
            candidates = list(self._open.values())[: len(self._open) - self.max_open // 2]
            chosen = [s for s in candidates if s.can_unload()][:excess]
            for state in chosen:
                self.close(state.id)
        if chosen:
            # An agent and its closures can form cycles: collect them now rather than at
            # some later collection, then hand the freed pages back (glibc keeps them).
            gc.collect()
            _release_free_memory()
            logger.debug("unloaded %d idle session(s) from memory", len(chosen))
        return len(chosen)

    def open_sessions(self) -> list[SessionState]:
        with self._lock:
            return list(self._open.values())

    def cleanup(self) -> None:
        """Close every open session (at shutdown)."""
        for state in self.open_sessions():
            self.close(state.id)
