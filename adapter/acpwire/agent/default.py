"""The embedded default agent: a tool-using chat loop over an OpenAI-compatible endpoint.

:class:`DefaultAgent` implements :class:`~acpwire.agent.seam.SyncAgent`. One turn calls
the model, runs the tool calls it asks for, feeds the results back, and repeats until
the model answers without tools (or a limit, an interrupt or an error stops it). Each
turn owns a fresh cancel token and its hooks, so nothing leaks from one turn into the
next. The history is compressed before a model call when it nears the context window (what
the model is sent, its size and its summary: :mod:`._context`).
"""

from __future__ import annotations

import logging
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

from acpwire.agent import _context as context, compress as ctx_size
from acpwire.agent.cancel import CancelToken
from acpwire.agent.config import AgentConfig, ConfigError
from acpwire.agent.llm import ChatClient
from acpwire.agent.seam import Message, StopKind, TurnHooks, TurnResult, TurnUsage
from acpwire.agent.stream import ModelCancelled, ModelError, ModelReply, ToolCall
from acpwire.agent.toolcalls import (
    INTERRUPTED,
    answer_dangling_calls,
    assistant_message,
    history_call_ids,
    run_call,
    unique_ids,
)
from acpwire.agent.tools import (
    CommandRunner,
    LocalRunner,
    SessionState,
    ToolContext,
    ToolRegistry,
    default_tools,
)
from acpwire.agent.tools.todo import restore_todos
from acpwire.limits import ToolLimits

__all__ = ["TOOL_RESULT_CAP", "DefaultAgent"]

log = logging.getLogger(__name__)

TOOL_RESULT_CAP = 100_000
_FINISH_STOPS: dict[str, StopKind] = {"length": "max_tokens", "content_filter": "refusal"}


@dataclass(slots=True)
class _Turn:
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


class DefaultAgent:
    """The embedded agent. ``config`` must name an endpoint and a model
    (see :func:`acpwire.agent.config.complete_config`)."""

    def __init__(
        self,
        config: AgentConfig,
        *,
        tools: ToolRegistry | None = None,
        runner: CommandRunner | None = None,
        internal_id: str | None = None,
        limits: ToolLimits | None = None,
    ) -> None:
        if not config.base_url or not config.model:
            raise ConfigError("the agent needs a base_url and a model (use complete_config)")
        self._config = config
        self._model = config.model
        self._client = ChatClient(config.base_url, config.api_key, timeout=config.request_timeout)
        self.tools = tools if tools is not None else default_tools()
        self._runner: CommandRunner = runner if runner is not None else LocalRunner()
        self._state = SessionState()
        self._limits = limits or ToolLimits()
        self._lock = threading.Lock()
        self._turn: _Turn | None = None
        self._session_id = internal_id or str(uuid.uuid4())
        self._last_cwd = ""
        self._reasoning_effort: str | None = None

    @property
    def internal_session_id(self) -> str:
        return self._session_id

    @property
    def model(self) -> str:
        return self._model

    def set_model(self, model: str) -> None:
        if not model.strip():
            raise ValueError("model must not be empty")
        self._model = model.strip()

    def set_reasoning_effort(self, effort: str | None) -> None:
        """``low``/``medium``/``high`` go to the model as ``reasoning_effort``; None omits it."""
        self._reasoning_effort = effort

    def tool_descriptions(self) -> list[tuple[str, str]]:
        return self.tools.descriptions()

    def close(self) -> None:
        self._client.close()

    def interrupt(self) -> None:
        with self._lock:
            turn = self._turn
        if turn is not None:
            turn.token.cancel()

    def steer(self, text: str) -> bool:
        if not text.strip():
            return False
        with self._lock:
            turn = self._turn
            if turn is None:
                return False
            with turn.lock:
                turn.steering.append(text.strip())
        return True

    def context_usage(self, history: list[Message]) -> tuple[int, int]:
        return self._estimate(history, self._last_cwd), self._config.context_window

    def compression_threshold(self) -> int:
        return int(self._threshold())

    def reset(self) -> None:
        """Nothing to forget: every turn starts from the history it is given."""

    def compress(self, history: list[Message], *, force: bool) -> list[Message]:
        if not force and self._estimate(history, self._last_cwd) <= self._threshold():
            return list(history)
        messages = list(history)
        keep = 1 if force else context.KEEP_RECENT_TURNS
        if self._summarise_older(messages, keep, CancelToken(), None):
            self._session_id = str(uuid.uuid4())
        return messages

    def run_turn(
        self,
        content: str | list[dict[str, Any]],
        history: list[Message],
        *,
        cwd: str,
        hooks: TurnHooks,
    ) -> TurnResult:
        turn = _Turn(CancelToken(), hooks)
        with self._lock:
            if self._turn is not None:
                return TurnResult(
                    messages=list(history), stop="error", error="a turn is already running"
                )
            self._turn = turn
        self._last_cwd = cwd
        messages: list[Message] = [*history, {"role": "user", "content": content}]
        try:
            if not self._state.todos:
                self._state.todos[:] = restore_todos(history)
            return self._loop(messages, cwd, turn)
        except Exception as exc:
            log.exception("turn failed")
            answer_dangling_calls(messages, "turn failed")
            return self._result(messages, turn, "error", None, f"internal error: {exc}")
        finally:
            with self._lock:
                self._turn = None

    def _loop(self, messages: list[Message], cwd: str, turn: _Turn) -> TurnResult:
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

    def _call_model(self, messages: list[Message], cwd: str, turn: _Turn) -> ModelReply:
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
        turn: _Turn,
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
        turn: _Turn,
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

    def _maybe_compress(self, messages: list[Message], cwd: str, turn: _Turn) -> None:
        if self._estimate(messages, cwd) <= self._threshold():
            return
        if self._summarise_older(messages, context.KEEP_RECENT_TURNS, turn.token, turn):
            self._session_id = str(uuid.uuid4())
            turn.hooks.on_internal_session_id(self._session_id, "compression")
        if self._estimate(messages, cwd) > self._threshold():
            elided = ctx_size.elide_tool_results(messages, keep_last=2)
            log.info("context still large after compression; elided %d tool results", elided)

    def _summarise_older(
        self, messages: list[Message], keep: int, cancel: CancelToken, turn: _Turn | None
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
