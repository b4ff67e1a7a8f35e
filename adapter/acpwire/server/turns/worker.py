"""A turn's agent call in the backend's thread pool, and how a cancel ends it.

The synchronous agent runs in a worker thread while the event loop watches: a
``session/cancel`` interrupts the agent (again every 50 ms, as the cancel may come before
the turn started) and after :data:`CANCEL_GRACE_S` an agent that ignores it is abandoned;
the turn answers ``cancelled`` either way. :class:`WorkerGate` settles the race between a
worker thread starting late and its request being given up, so a turn is either run or
known never to run (and the session never waits for it).
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import threading

import anyio
from anyio import CapacityLimiter

from acpwire.agent.seam import SyncAgent, TurnResult
from acpwire.rpc.errors import mistake
from acpwire.server.sessions.state import QueuedPrompt, SessionState
from acpwire.server.turns.bridge import TurnBridge

logger = logging.getLogger(__name__)

CANCEL_GRACE_S = 3.0
"""How long an agent may take to honour a cancel before its worker is abandoned."""


class WorkerGate:
    """Decides, once, between a turn's worker thread starting and the turn giving it up.

    A worker submitted to the thread pool may start after its request was cancelled;
    whichever of :meth:`begin` (the worker) and :meth:`abandon` (the event loop) comes
    first wins.
    """

    __slots__ = ("_lock", "_state")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = "waiting"

    def begin(self) -> bool:
        with self._lock:
            if self._state != "waiting":
                return False
            self._state = "running"
            return True

    def abandon(self) -> bool:
        """True when the worker had not started: it never will."""
        with self._lock:
            if self._state != "waiting":
                return False
            self._state = "abandoned"
            return True


async def run_agent_turn(
    state: SessionState,
    prompt: QueuedPrompt,
    bridge: TurnBridge,
    *,
    done: anyio.Event,
    gate: WorkerGate,
    limiter: CapacityLimiter,
) -> TurnResult | None:
    """Run the session agent's turn in a worker; None when it was cancelled and given up
    or never started. ``done`` is set by the worker when it ends (also when abandoned)."""
    agent: SyncAgent = state.agent
    history = list(state.history)

    def work() -> TurnResult | None:
        if not gate.begin():
            return None  # the turn was given up before this thread got to it
        try:
            result = agent.run_turn(prompt.content, history, cwd=state.cwd, hooks=bridge)
            return checked_result(agent, result)
        finally:
            loop_set(done)

    box: list[TurnResult | None] = []

    async def run() -> None:
        box.append(await anyio.to_thread.run_sync(work, limiter=limiter, abandon_on_cancel=True))

    give_up_at: float | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        while not box:
            with anyio.move_on_after(0.05):
                await done.wait()
            if done.is_set():
                break
            if state.cancel_requested:
                agent.interrupt()
                give_up_at = give_up_at or anyio.current_time() + CANCEL_GRACE_S
                if anyio.current_time() >= give_up_at:
                    logger.warning(
                        "session %s: the agent ignored the cancel; abandoning its worker",
                        state.id,
                    )
                    tg.cancel_scope.cancel()
                    return None
    return box[0] if box else None


def checked_result(agent: SyncAgent, result: object) -> TurnResult:
    """``result`` of ``agent.run_turn`` if it is a :class:`TurnResult`; else a
    :class:`TypeError` naming what came (answered to the prompt, and logged)."""
    if isinstance(result, TurnResult):
        return result
    where = f"{type(agent).__name__}.run_turn"
    fix = "return self.reply(content, history, text)" if hasattr(agent, "reply") else ""
    fix = fix or "return a TurnResult(messages, final_text)"
    if result is None:
        raise mistake(TypeError(f"{where} returned None, expected a TurnResult: {fix}"))
    if inspect.iscoroutine(result):
        result.close()
        raise mistake(
            TypeError(
                f"{where} returned the coroutine {result.__qualname__}(), expected a "
                "TurnResult: run_turn is synchronous (it runs in a worker thread): write def "
                "run_turn, not async def"
            )
        )
    raise mistake(
        TypeError(f"{where} returned {type(result).__name__}, expected a TurnResult: {fix}")
    )


def loop_set(event: anyio.Event) -> None:
    """Set an anyio event from a worker thread."""
    with contextlib.suppress(RuntimeError):  # the loop is gone (shutdown)
        anyio.from_thread.run_sync(event.set)
