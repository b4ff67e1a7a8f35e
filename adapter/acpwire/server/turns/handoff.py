"""The thread-to-loop hand-off under the turn bridge: one ordered queue and its pump.

Worker threads append items to an unbounded inbox and return at once; the event loop is
woken only when no wake-up is pending already, and moves the inbox into a memory stream
that one pump task reads in order. Consecutive text (or thought) items waiting together
are joined into one (never reordered or dropped). A :class:`Call` is a coroutine a
thread wants run on the loop, in queue order, with the thread blocked on a future for
its answer; it is abandoned when its caller stops waiting, when the turn is cancelled
(calls marked ``on_cancel``) or when the turn is over. This module knows nothing of ACP:
what an item means is the handler's business (:class:`~.bridge.TurnBridge`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio

__all__ = ["TEXT", "THOUGHT", "Call", "Handoff"]

logger = logging.getLogger(__name__)

TEXT, THOUGHT = "text", "thought"
"""The kinds of ``(kind, text)`` items the pump coalesces."""

_END = object()


@dataclass(slots=True)
class Call:
    """A coroutine to run on the loop for a waiting thread."""

    run: Callable[[], Awaitable[Any]]
    future: concurrent.futures.Future[Any]
    aborted: Any = None
    """The answer when the call is abandoned."""
    awaited: bool = True
    """The agent thread waits for the answer: abandon the call once the turn is over."""
    on_cancel: bool = False
    """Abandon the call as soon as the turn is cancelled (approvals: a cancel refuses)."""


class Handoff:
    """The queue of one turn; created on the event loop it hands items to."""

    def __init__(self, *, call_timeout: float) -> None:
        self._call_timeout = call_timeout
        self._loop = asyncio.get_running_loop()
        self._send, self._receive = anyio.create_memory_object_stream[Any](float("inf"))
        self._inbox: deque[object] = deque()  # thread side -> drain (appends are atomic)
        self._wake_lock = threading.Lock()
        self._wake_pending = False
        self._closed = False
        self._cancelled = False
        self._current: tuple[anyio.CancelScope, Call] | None = None

    # -- thread side -----------------------------------------------------------------

    def put(self, item: object) -> None:
        """Queue ``item`` for the pump; wakes the event loop only when no wake-up is
        pending already (a streamed token is one append, not one loop round trip)."""
        if self._closed:
            return
        self._inbox.append(item)
        with self._wake_lock:
            if self._wake_pending:
                return
            self._wake_pending = True
        try:
            self._loop.call_soon_threadsafe(self.drain)
        except RuntimeError:  # the event loop is closed: a worker abandoned at shutdown
            logger.debug("turn bridge: event loop closed; dropped %r", item)

    def ask(
        self,
        run: Callable[[], Awaitable[Any]],
        default: Any,
        *,
        refusal: Any = None,
        timeout: float | None = None,
    ) -> Any:
        """Run ``run`` on the loop and wait (``timeout``) for its answer; ``default`` on
        failure. An approval passes its ``refusal``: the answer when the turn is cancelled
        (or over) before the editor answered.
        """
        if self._closed:
            return default
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        if refusal is None:
            self.put(Call(run, future, default))
        else:
            self.put(Call(run, future, refusal, on_cancel=True))
        try:
            return future.result(timeout=timeout or self._call_timeout)
        except Exception as exc:  # timeouts and client failures answer the safe default
            logger.warning("turn bridge call failed (%s); using %r", exc, default)
            future.cancel()
            self._abandon(future)
            return default

    def _abandon(self, future: concurrent.futures.Future[Any]) -> None:
        """Nobody waits for ``future`` any more: stop its editor request if it is the one
        running, so an editor that never answers does not hold up the updates behind it."""

        def stop() -> None:
            if self._current is not None and self._current[1].future is future:
                self._current[0].cancel()

        with contextlib.suppress(RuntimeError):  # RuntimeError: the event loop is closed
            self._loop.call_soon_threadsafe(stop)

    # -- loop side -------------------------------------------------------------------

    def drain(self) -> None:
        """On the loop: move everything the threads queued to the pump, in order."""
        with self._wake_lock:
            self._wake_pending = False  # an item appended from now on wakes us again
        inbox, send = self._inbox, self._send.send_nowait
        while inbox:
            send(inbox.popleft())

    def put_now(self, item: object) -> None:
        """On the loop: queue ``item`` behind everything queued so far."""
        self._send.send_nowait(item)

    def cancel_calls(self) -> None:
        """The turn is being cancelled: refuse pending and later ``on_cancel`` calls."""
        self._cancelled = True
        if self._current is not None and self._current[1].on_cancel:
            self._current[0].cancel()

    def finish(self) -> None:
        """Stop accepting items; :meth:`pump` returns once everything queued is handled.

        Nobody waits for the answer of a call still pending now (the agent is done or
        was abandoned), so it is abandoned rather than waited for.
        """
        self.drain()
        self._send.send_nowait(_END)
        if self._current is not None and self._current[1].awaited:
            self._current[0].cancel()

    async def pump(self, handle: Callable[[Any], Awaitable[None]]) -> None:
        """Hand queued items to ``handle`` in order (run the calls) until :meth:`finish`;
        waiting ``(TEXT | THOUGHT, text)`` items of one kind arrive joined as one."""
        pending: object | None = None
        while True:
            item = pending if pending is not None else await self._receive.receive()
            pending = None
            if item is _END:
                self._closed = True
                return
            if isinstance(item, tuple) and item[0] in (TEXT, THOUGHT):
                kind, parts = item[0], [item[1]]
                while True:  # coalesce what is already waiting, in order
                    try:
                        nxt = self._receive.receive_nowait()
                    except anyio.WouldBlock:
                        break
                    if isinstance(nxt, tuple) and nxt[0] == kind:
                        parts.append(nxt[1])
                    else:
                        pending = nxt
                        break
                await handle((kind, "".join(parts)))
            elif isinstance(item, Call):
                await self._run_call(item)
            else:
                await handle(item)

    async def _run_call(self, call: Call) -> None:
        result = call.aborted
        if call.awaited and call.future.cancelled():
            return  # its caller gave up (a timeout) before it was sent: never send it
        try:
            if not (call.on_cancel and self._cancelled):
                with anyio.CancelScope() as scope:
                    self._current = (scope, call)
                    try:
                        result = await call.run()
                    except Exception as exc:
                        logger.exception("turn bridge call failed")
                        if not call.future.done():
                            call.future.set_exception(exc)
                        return
                    finally:
                        self._current = None
                if scope.cancelled_caught:
                    logger.info("editor request abandoned: the turn was cancelled or is over")
                    result = call.aborted
        finally:
            # Also when the pump itself is cancelled (the connection is torn down): the
            # agent's thread must not wait out its timeout for an answer never coming.
            if not call.future.done():
                call.future.set_result(result)
