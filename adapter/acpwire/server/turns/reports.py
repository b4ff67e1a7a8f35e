"""What the editor and the store learn around a session's prompt turns.

The notifications the backend sends about a session (slash commands, context usage,
title and provenance, config options) and a turn's record: its title when it starts,
and when it has ended its history saved, an internal-session rotation reported, an
error or unstreamed answer shown, a leftover steer queued, a generated title asked for
after the answer, and the ACP stop reason and usage it answers with.
:class:`TurnReports` is the base of :class:`~.runner.TurnRunner`, which
decides when turns run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from acp_v1 import models as m
from acpwire.agent.seam import TurnResult
from acpwire.link.endpoint import after_answer
from acpwire.server.editor.services import SessionServices
from acpwire.server.sessions import options
from acpwire.server.sessions.state import QueuedPrompt, SessionState
from acpwire.server.turns import commands, queued as queued_prompts

if TYPE_CHECKING:
    from acpwire.server.editor.backend_view import Backend

__all__ = ["STOP_REASONS", "TITLE_CHARS", "TurnReports"]

TITLE_CHARS = 80
"""A session's title from its first prompt is cut at this many characters."""

STOP_REASONS: Final[dict[str, m.KnownStopReason]] = {
    "end_turn": "end_turn",
    "max_tokens": "max_tokens",
    "max_turn_requests": "max_turn_requests",
    "refusal": "refusal",
    "cancelled": "cancelled",
}
"""The agent's stop reasons that ACP defines (any other ends the turn as ``end_turn``)."""


class TurnReports:
    """The reports around the turns of every session of one connection."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend

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

    # -- a turn's record ------------------------------------------------------------------

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
