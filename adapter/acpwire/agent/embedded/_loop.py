"""The default agent's turn loop (mixed into :class:`~acpwire.agent.embedded.default.DefaultAgent`).

:class:`TurnLoop` runs one turn: call the model, run the tool calls it asks for, feed
the results back, and repeat until the model answers without tools, a limit or an
interrupt stops it, or the model fails. Before each model call the history is
compressed when it nears the context window (:mod:`._context`). :class:`Turn` is what
one turn owns: its cancel token, hooks, usage, the text streamed so far and the
guidance the user sent meanwhile.
"""

from __future__ import annotations

import logging
import threading
import uuid
from dataclasses import dataclass, field

from acpwire.agent.cancel import CancelToken
from acpwire.agent.embedded import _context as context, compress as ctx_size
from acpwire.agent.embedded.llm import ChatClient
from acpwire.agent.embedded.provider import AgentConfig
from acpwire.agent.embedded.stream import ModelCancelled, ModelError, ModelReply, ToolCall
from acpwire.agent.embedded.toolcalls import (
    INTERRUPTED,
    assistant_message,
    history_call_ids,
    run_call,
    unique_ids,
)
from acpwire.agent.embedded.tools import CommandRunner, SessionState, ToolContext, ToolRegistry
from acpwire.agent.seam import Message, StopKind, TurnHooks, TurnResult, TurnUsage
from acpwire.config.limits import ToolLimits

__all__ = ["TOOL_RESULT_CAP", "Turn", "TurnLoop"]

log = logging.getLogger("acpwire.agent.embedded.default")
"""The agent's logger: the loop logs as it did inside :mod:`acpwire.agent.embedded.default`."""

TOOL_RESULT_CAP = 100_000
_FINISH_STOPS: dict[str, StopKind] = {"length": "max_tokens", "content_filter": "refusal"}


@dataclass(slots=True)
class Turn:
    """What one turn owns; ``lock`` guards ``steering`` (the user may steer from
    another thread)."""

    token: CancelToken
    hooks: TurnHooks
    usage: TurnUsage = field(default_factory=TurnUsage)
    partial: list[str] = field(default_factory=list)
    steering: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add_usage(self, usage: TurnUsage) -> None:
        self.usage.input_tokens += usage.input_tokens
        self.usage.output_tokens += usage.output_tokens
        self.usage.reasoning_tokens += usage.reasoning_tokens
        self.usage.cached_read_tokens += usage.cached_read_tokens

    def take_steer(self) -> str | None:
        with self.lock:
            text = "\n".join(self.steering)
            self.steering.clear()
        return text or None


class TurnLoop:
    """The turn loop of :class:`~acpwire.agent.embedded.default.DefaultAgent`, which sets the
    attributes below."""

    tools: ToolRegistry
    _config: AgentConfig
    _model: str
    _client: ChatClient
    _runner: CommandRunner
    _state: SessionState
    _limits: ToolLimits
    _session_id: str
    _reasoning_effort: str | None

    def _loop(self, messages: list[Message], cwd: str, turn: Turn) -> TurnResult:
        seen_ids = history_call_ids(messages)
        final_text: str | None = None
        for _ in range(self._config.max_iterations):
            if turn.token.cancelled:
                return self._result(messages, turn, "cancelled", final_text)
            turn.partial.clear()  # the last reply is in messages already
            try:
                self._maybe_compress(messages, cwd, turn)
                reply = self._call_model(messages, cwd, turn)
            except ModelCancelled:
                partial = "".join(turn.partial)
                if partial:
                    messages.append({"role": "assistant", "content": partial})
                return self._result(messages, turn, "cancelled", partial or final_text)
            except ModelError as exc:
                return self._result(messages, turn, "error", final_text, exc.message)
            calls = unique_ids(reply.tool_calls, seen_ids)
            messages.append(assistant_message(reply.text, reply.reasoning, calls))
            final_text = reply.text or None
            stop = _FINISH_STOPS.get(reply.finish_reason or "")
            if not calls:
                return self._result(messages, turn, stop or "end_turn", final_text)
            skip = None if stop is None else f"not run: the model's reply was cut off ({stop})"
            self._run_calls(calls, messages, cwd, turn, skip)
            if stop is not None:
                return self._result(messages, turn, stop, final_text)
            if turn.token.cancelled:
                return self._result(messages, turn, "cancelled", final_text)
        return self._result(messages, turn, "max_turn_requests", final_text)

    def _call_model(self, messages: list[Message], cwd: str, turn: Turn) -> ModelReply:
        turn.partial.clear()

        def on_text(text: str) -> None:
            turn.partial.append(text)
            turn.hooks.on_text_delta(text)

        reply = self._client.chat(
            model=self._model,
            messages=self._wire(messages, cwd),
            tools=self.tools.specs(),
            temperature=self._config.temperature,
            reasoning_effort=self._reasoning_effort,
            cancel=turn.token,
            on_text=on_text,
            on_reasoning=turn.hooks.on_thought_delta,
        )
        turn.add_usage(reply.usage)
        return reply

    def _run_calls(
        self,
        calls: list[ToolCall],
        messages: list[Message],
        cwd: str,
        turn: Turn,
        skip: str | None,
    ) -> None:
        for call in calls:
            ctx = ToolContext(
                call.id, cwd, turn.hooks, turn.token, self._runner, self._state, self._limits
            )
            reason = skip or (INTERRUPTED if turn.token.cancelled else None)
            outcome = run_call(call, ctx, self.tools, reason)
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "content": ctx_size.cap_text(outcome.result_text, TOOL_RESULT_CAP),
                }
            )
        steer = turn.take_steer()
        if steer is not None:
            messages[-1]["content"] += f"\n\n[Guidance from the user while you worked: {steer}]"

    def _result(
        self,
        messages: list[Message],
        turn: Turn,
        stop: StopKind,
        final_text: str | None,
        error: str | None = None,
    ) -> TurnResult:
        return TurnResult(
            messages=list(messages),
            final_text=final_text,
            stop=stop,
            usage=turn.usage,
            error=error,
            pending_steer=turn.take_steer(),
        )

    def _wire(self, messages: list[Message], cwd: str) -> list[Message]:
        return context.wire(messages, context.system_prompt(cwd, self.tools))

    def _estimate(self, messages: list[Message], cwd: str) -> int:
        return context.estimate(messages, cwd, self.tools)

    def _threshold(self) -> float:
        return context.COMPRESS_AT * self._config.context_window

    def _maybe_compress(self, messages: list[Message], cwd: str, turn: Turn) -> None:
        if self._estimate(messages, cwd) <= self._threshold():
            return
        if self._summarise_older(messages, context.KEEP_RECENT_TURNS, turn.token, turn):
            self._session_id = str(uuid.uuid4())
            turn.hooks.on_internal_session_id(self._session_id, "compression")
        if self._estimate(messages, cwd) > self._threshold():
            elided = ctx_size.elide_tool_results(messages, keep_last=2)
            log.info("context still large after compression; elided %d tool results", elided)

    def _summarise_older(
        self, messages: list[Message], keep: int, cancel: CancelToken, turn: Turn | None
    ) -> bool:
        """Replace all but the last ``keep`` turns with a summary, in place."""
        usage = context.summarise_older(
            messages,
            keep,
            client=self._client,
            model=self._model,
            context_window=self._config.context_window,
            cancel=cancel,
        )
        if usage is None:
            return False
        if turn is not None:
            turn.add_usage(usage)
        return True
