"""Signals to the stdio backend: Ctrl-C in the client's terminal stops a turn, not the process.

A client that runs the backend in its own process group (acpx does) passes the user's
Ctrl-C on as SIGINT to both processes, then sends ``session/cancel``. So while turns run,
a SIGINT cancels them (their prompts answer ``cancelled``) and the backend goes on
serving; a SIGINT when nothing runs, a second one within :data:`SECOND_WITHIN_S`, or a
SIGTERM ends the process cleanly (turns stopped, output flushed, the session database
closed, exit code 0). Once it is ending, further signals are ignored, so no traceback
from a late Ctrl-C reaches stderr.
"""

from __future__ import annotations

import logging
import signal
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:  # the store and the agent seam load with the backend, not before
    from acpwire.server.sessions.state import SessionState

__all__ = ["SECOND_WITHIN_S", "SignalPolicy", "watch_signals"]

logger = logging.getLogger(__name__)

SECOND_WITHIN_S = 2.0
"""A second SIGINT this soon after one that cancelled turns ends the process."""


def _busy(state: SessionState) -> bool:
    return state.running or state.prompts_arrived > 0


class SignalPolicy:
    """Decides what a signal does: cancel the running turns, or end the process."""

    def __init__(
        self,
        sessions: Callable[[], Iterable[SessionState]],
        cancel: Callable[[SessionState], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sessions = sessions
        self._cancel = cancel
        self._clock = clock
        self._last_interrupt: float | None = None

    def ends_process(self, signum: int) -> bool:
        """Act on ``signum``; True when the process should end."""
        if signum != signal.SIGINT:
            logger.info("%s: shutting down", signal.Signals(signum).name)
            return True
        now = self._clock()
        if self._last_interrupt is not None and now - self._last_interrupt <= SECOND_WITHIN_S:
            logger.info("SIGINT again: shutting down")
            return True
        running = [state for state in self._sessions() if _busy(state)]
        if not running:
            logger.info("SIGINT with no turn running: shutting down")
            return True
        self._last_interrupt = now
        for state in running:
            self._cancel(state)
        logger.info(
            "SIGINT: cancelled the turn of %d session(s); another within %g s exits",
            len(running),
            SECOND_WITHIN_S,
        )
        return False


async def watch_signals(policy: SignalPolicy, stop: Callable[[], None]) -> None:
    """Receive SIGINT and SIGTERM until the policy ends the process, then call ``stop``."""
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as received:
        async for signum in received:
            if policy.ends_process(signum):
                break
        else:  # pragma: no cover - the receiver never ends on its own
            return
    # Leaving the receiver restored Python's handlers: a late Ctrl-C would raise
    # KeyboardInterrupt in the middle of the shutdown.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    stop()
