"""Prompt turns: queueing, steering and cancellation (the history, title and usage
around each turn are :mod:`~.reports`).

A turn runs the synchronous agent in the backend's thread pool (:mod:`~.worker`; its
context variables are a copy per turn, so sessions sharing pool threads never see each
other's); turns of one session never overlap (``SessionState.turn_lock``). Updates flow
through a :class:`~.bridge.TurnBridge` and are all sent before the
``session/prompt`` answer. Rules, each fixing a defect of the Hermes adapter:

* ``session/cancel`` interrupts the agent and the prompt answers ``cancelled`` promptly
  (after a short grace period the worker is abandoned); a cancel while idle changes
  nothing; a cancelled turn never goes on to run queued prompts;
* ``running`` is reset in ``finally``, also when the request itself is cancelled; a
  request cancelled before its worker started leaves no turn behind to wait for;
* a prompt arriving during a turn is queued, stored (:mod:`~.queued`) and answered at
  once; after a normal turn the queue runs inside the same request, each queued prompt
  echoed as a user message; one that never runs is recorded as not run;
* a prompt arriving while the running turn is being cancelled (an editor's "send now":
  cancel, then prompt) is not queued behind it: it runs as soon as that turn has ended.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

import anyio

from acp_v1 import models as m
from acpwire.agent.seam import TurnResult
from acpwire.server.editor.services import SessionServices
from acpwire.server.sessions.state import QueuedPrompt, SessionState
from acpwire.server.turns import commands, queued as queued_prompts
from acpwire.server.turns.bridge import TurnBridge
from acpwire.server.turns.reports import TurnReports
from acpwire.server.turns.worker import CANCEL_GRACE_S, WorkerGate, run_agent_turn

__all__ = ["TurnRunner"]

logger = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def _busy(state: SessionState) -> AsyncIterator[None]:
    """The session is running for the block; afterwards no cancel, prompt or pending
    approvals are left behind for the next turn (or an idle ``/steer``) to trip over."""
    state.running, state.cancel_requested = True, False
    try:
        yield
    finally:
        state.running, state.cancel_requested, state.abort_calls = False, False, None
        state.current_prompt = None


async def _last_worker_gone(state: SessionState, epoch: int | None) -> bool:
    """Wait while an abandoned worker of the session still runs (one that ignored a
    cancel); False at once if a cancel arrives meanwhile (``epoch`` moved on)."""
    done = state.turn_done
    while done is not None and not done.is_set():
        with anyio.move_on_after(0.05):
            await done.wait()
        if epoch is not None and state.cancel_epoch != epoch:
            return False
    return epoch is None or state.cancel_epoch == epoch


class TurnRunner(TurnReports):
    """Runs the prompt turns of every session of one connection (what the editor and
    the store learn around each turn: :class:`~.reports.TurnReports`)."""

    # -- cancel / stop ------------------------------------------------------------------

    def cancel(self, state: SessionState) -> None:
        """``session/cancel``: a no-op when idle; otherwise interrupt and drop the queue.

        A prompt that has arrived but not started its turn yet counts as running: the
        cancel that follows it on the wire is meant for it."""
        if not state.running and state.prompts_arrived == 0:
            logger.debug("cancel for idle session %s: nothing to do", state.id)
            return
        state.cancel_epoch += 1
        state.cancel_requested = True
        state.interrupted_prompt = state.current_prompt
        dropped = len(state.queue)
        state.unrun.extend(state.queue)  # recorded as not run when the turn has ended
        state.queue.clear()
        if dropped:
            logger.info("session %s: cancel dropped %d queued prompt(s)", state.id, dropped)
        state.agent.interrupt()
        if state.abort_calls is not None:
            state.abort_calls()

    async def stop(self, state: SessionState, *, reason: str) -> None:
        """Cancel running work and wait (bounded) for the turn to have ended, its history
        saved, and for its worker to finish: what follows (a delete) finds it settled."""
        self.cancel(state)
        with anyio.move_on_after(CANCEL_GRACE_S * 2):
            async with state.turn_lock:  # held by a turn until its history is saved
                pass
            if state.turn_done is not None:
                await state.turn_done.wait()
        logger.info("session %s stopped: %s", state.id, reason)

    # -- prompts --------------------------------------------------------------------------

    async def prompt(
        self, state: SessionState, params: m.PromptRequest, epoch: int
    ) -> m.PromptResponse:
        """``epoch``: ``state.cancel_epoch`` when the request arrived; a cancel since then
        cancels this prompt before its turn starts."""
        if state.cancel_epoch != epoch and not state.running:
            return m.PromptResponse(stop_reason="cancelled")
        # The attachment readers load with the first prompt, not with the backend.
        from acpwire.attachments import PromptContent, left_out_message, prompt_to_model_content

        cap = self.backend.settings.tools.max_attachments_bytes
        content = prompt_to_model_content(
            list(params.prompt), cwd=state.cwd, accepts_images=True, max_total_bytes=cap
        )
        if content.left_out:
            await self.backend.notifier.message(state.id, left_out_message(content.left_out, cap))
        text = content.display_text.strip()
        if content.is_empty:
            return m.PromptResponse(stop_reason="end_turn")
        text_only = isinstance(content.content, str)
        if text_only and text.startswith("/"):
            # The command reads the text as shown; /queue and /steer carry the prompt
            # with its attachments inlined.
            full = str(content.content).strip()
            reply = await commands.handle(self, state, text, full=full)
            if isinstance(reply, commands.RunPrompt):
                display = reply.display or str(reply.content)
                content = PromptContent(content=reply.content, display_text=display, notes=[])
            elif reply is not None:
                await self.backend.notifier.message(state.id, reply)
                await self.send_usage(state)
                if state.queue and not state.running:  # prompts that came during /compact
                    return await self.run_turns(state, None)
                await queued_prompts.settle_unrun(self.backend, state)
                return m.PromptResponse(stop_reason="end_turn")
        queued = QueuedPrompt(content.content, content.display_text or "[attachment]")
        if state.running and not state.cancel_requested:
            waiting = await self.enqueue(state, queued)
            await self.backend.notifier.message(
                state.id, f"Queued for the next turn. ({waiting} queued)"
            )
            return m.PromptResponse(stop_reason="end_turn")
        return await self.run_turns(state, queued)

    async def enqueue(self, state: SessionState, queued: QueuedPrompt) -> int:
        """Queue a prompt behind the running turn, stored before the caller acknowledges
        it (:func:`~.queued.enqueue`); the queue's length."""
        return await queued_prompts.enqueue(self.backend, state, queued)

    async def run_turns(self, state: SessionState, first: QueuedPrompt | None) -> m.PromptResponse:
        """Run ``first`` (the request's own prompt), then the queue while turns end
        normally; a queued prompt is echoed as a user message before its turn."""
        stop: m.KnownStopReason = "end_turn"
        usage: m.Usage | None = None
        try:
            if first is not None:
                stop, usage = await self._run_one(state, first)
            while stop == "end_turn" and state.queue:
                nxt = state.queue.popleft()
                try:
                    await self.backend.notifier.update(
                        state.id,
                        m.SessionUpdateUserMessageChunk(
                            content=m.ContentBlockText(text=nxt.display)
                        ),
                    )
                    stop, usage = await self._run_one(state, nxt)
                finally:
                    if not nxt.started:  # cancelled before its turn began
                        state.unrun.append(nxt)
        finally:
            await queued_prompts.settle_unrun(self.backend, state)
        return m.PromptResponse(stop_reason=stop, usage=usage)

    async def _run_one(
        self, state: SessionState, prompt: QueuedPrompt
    ) -> tuple[m.KnownStopReason, m.Usage | None]:
        epoch = state.cancel_epoch
        async with state.turn_lock:
            if not await _last_worker_gone(state, epoch):
                return "cancelled", None  # cancelled while waiting for it
            async with _busy(state):
                return await self._turn(state, prompt)

    @contextlib.asynccontextmanager
    async def between_turns(self, state: SessionState) -> AsyncIterator[None]:
        """Work on the agent and history that no turn may overlap (``/compact``,
        ``/reset``): waits for the running turn, then counts as running itself, so a prompt
        arriving meanwhile is queued."""
        async with state.turn_lock:
            await _last_worker_gone(state, None)
            async with _busy(state):
                yield

    async def _turn(
        self, state: SessionState, prompt: QueuedPrompt
    ) -> tuple[m.KnownStopReason, m.Usage | None]:
        backend = self.backend
        state.current_prompt = prompt
        done = state.turn_done = anyio.Event()
        gate = WorkerGate()
        services = SessionServices(backend, state)
        bridge = TurnBridge(
            services, cwd=state.cwd, call_timeout=backend.settings.approval_timeout_s + 30
        )
        result: TurnResult | None = None
        before = state.agent.internal_session_id
        state.abort_calls = bridge.cancel_calls
        try:
            await self._start_turn(state, prompt)
            async with anyio.create_task_group() as tg:
                tg.start_soon(bridge.pump)
                result = await run_agent_turn(
                    state, prompt, bridge, done=done, gate=gate, limiter=backend.limiter
                )
                bridge.close_open_calls("The turn ended before this tool call finished.")
                await bridge.finish()
        except anyio.get_cancelled_exc_class():
            state.agent.interrupt()  # the prompt request itself was cancelled
            bridge.cancel_calls()
            raise
        finally:
            # ``done`` is set by the worker itself (an abandoned one when it ends), or here
            # when the worker never started and now never will.
            if gate.abandon():
                done.set()
        return await self._finish(state, prompt, result, before)
