"""Prompt turns: queueing, steering, cancellation, history and usage around each turn.

A turn runs the synchronous agent in the backend's thread pool (:mod:`.worker`; its
context variables are a copy per turn, so sessions sharing pool threads never see each
other's); turns of one session never overlap (``SessionState.turn_lock``). Updates flow
through a :class:`~acpwire.server.bridge.TurnBridge` and are all sent before the
``session/prompt`` answer. Rules, each fixing a defect of the Hermes adapter:

* ``session/cancel`` interrupts the agent and the prompt answers ``cancelled`` promptly
  (after a short grace period the worker is abandoned); a cancel while idle changes
  nothing; a cancelled turn never goes on to run queued prompts;
* ``running`` is reset in ``finally``, also when the request itself is cancelled; a
  request cancelled before its worker started leaves no turn behind to wait for;
* a prompt arriving during a turn is queued, stored (:mod:`.queued`) and answered at
  once; after a normal turn the queue runs inside the same request, each queued prompt
  echoed as a user message; one that never runs is recorded as not run;
* a prompt arriving while the running turn is being cancelled (an editor's "send now":
  cancel, then prompt) is not queued behind it: it runs as soon as that turn has ended.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Final

import anyio

from acp_v1 import models as m
from acpwire.agent.seam import TurnResult
from acpwire.endpoint import after_answer

from . import commands, options, queued as queued_prompts
from .bridge import TurnBridge
from .services import SessionServices
from .state import QueuedPrompt, SessionState
from .worker import CANCEL_GRACE_S, WorkerGate, run_agent_turn

if TYPE_CHECKING:
    from .core import BackendCore

logger = logging.getLogger(__name__)

TITLE_CHARS = 80


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


STOP_REASONS: Final[dict[str, m.KnownStopReason]] = {
    "end_turn": "end_turn",
    "max_tokens": "max_tokens",
    "max_turn_requests": "max_turn_requests",
    "refusal": "refusal",
    "cancelled": "cancelled",
}
"""The agent's stop reasons that ACP defines (any other ends the turn as ``end_turn``)."""


class TurnRunner:
    """Runs the prompt turns of every session of one connection."""

    def __init__(self, backend: BackendCore) -> None:
        self.backend = backend

    # -- notifications the backend sends around turns ------------------------------------

    async def advertise(self, state: SessionState) -> None:
        """Slash commands, context usage and title, sent after session setup."""
        notifier = self.backend.notifier
        # A title a prompt gives the session meanwhile is that prompt's to send (it was
        # sent twice when the first prompt followed the answer at once, as Toad's does).
        titled = bool(state.record.title)
        await notifier.update(
            state.id,
            m.SessionUpdateAvailableCommandsUpdate(available_commands=commands.advertised()),
        )
        await self.send_usage(state)
        if titled:
            await self.send_info(state)

    async def send_usage(self, state: SessionState) -> None:
        used, size = await self.backend.blocking(state.agent.context_usage, list(state.history))
        if size > 0:
            await self.backend.notifier.update(
                state.id, m.SessionUpdateUsageUpdate(used=used, size=size)
            )

    async def send_info(self, state: SessionState, meta: dict[str, Any] | None = None) -> None:
        """Title and time of the session, with its provenance in ``_meta`` (as hermes-acp
        sends every ``session_info_update``); ``meta``: a rotation's fuller provenance."""
        if meta is None:
            meta = await self.backend.blocking(self.backend.provenance, state)
        update = m.SessionUpdateSessionInfoUpdate(
            title=state.record.title, updated_at=state.record.updated_at.isoformat(), meta=meta
        )
        await self.backend.notifier.update(state.id, update)

    async def send_config(self, state: SessionState) -> None:
        models = await self.backend.blocking(self.backend.factory.available_models)
        update = m.SessionUpdateConfigOptionUpdate(
            config_options=options.config_options(state, models)
        )
        await self.backend.notifier.update(state.id, update)

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
        it (:func:`.queued.enqueue`); the queue's length."""
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

    def _retitle_later(self, state: SessionState, prompt: QueuedPrompt, result: TurnResult) -> None:
        """After a session's first exchange, a title from the agent's own generator
        (``factory.title_for``, Hermes'), once the prompt is answered."""
        titler = getattr(self.backend.factory, "title_for", None)
        users = sum(1 for message in result.messages if message.get("role") == "user")
        if not callable(titler) or state.record.title_is_explicit or users != 1:
            return
        answer = result.final_text or ""

        async def retitle() -> None:
            title = await self.backend.blocking(titler, state.id, prompt.display, answer)
            if isinstance(title, str) and title.strip() and not state.record.title_is_explicit:
                await self.backend.blocking(
                    lambda: self.backend.manager.update(state, title=title.strip())
                )
                await self.send_info(state)

        after_answer(retitle)

    async def _start_turn(self, state: SessionState, prompt: QueuedPrompt) -> None:
        manager = self.backend.manager
        await queued_prompts.begin(self.backend, state, prompt)
        if not state.record.title:
            title = " ".join(prompt.display.split())[:TITLE_CHARS] or "New session"
            await self.backend.blocking(lambda: manager.update(state, title=title))
            await self.send_info(state)

    async def _finish(
        self, state: SessionState, prompt: QueuedPrompt, result: TurnResult | None, before: str
    ) -> tuple[m.KnownStopReason, m.Usage | None]:
        backend = self.backend
        cancelled = state.cancel_requested or result is None or result.stop == "cancelled"
        if result is not None:
            await self.backend.blocking(backend.manager.save_history, state, result.messages)
            if not cancelled:
                self._retitle_later(state, prompt, result)
            after = state.agent.internal_session_id
            if after != before and state.record.internal_id != after:
                await SessionServices(backend, state).rotated(after, "compression")
            if result.stop == "error":
                await backend.notifier.message(
                    state.id, f"Error: {result.error or 'the model request failed'}"
                )
            elif result.final_text and not result.streamed:
                await backend.notifier.message(state.id, result.final_text)
            if result.pending_steer and not cancelled:
                state.queue.appendleft(QueuedPrompt(result.pending_steer, result.pending_steer))
        await self.send_usage(state)
        if cancelled:
            return "cancelled", None
        assert result is not None
        stop = STOP_REASONS.get(result.stop, "end_turn")
        u = result.usage
        if not u.total_tokens:  # the model reported nothing: no made-up zeros
            return stop, None
        usage = m.Usage(
            input_tokens=u.input_tokens,
            output_tokens=u.output_tokens,
            thought_tokens=u.reasoning_tokens or None,
            cached_read_tokens=u.cached_read_tokens or None,
            total_tokens=u.total_tokens,
        )
        return stop, usage
