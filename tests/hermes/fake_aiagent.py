"""A small real class with the attribute shape of Hermes' ``run_agent.AIAgent`` (0.19.0).

It does what the adapter relies on and nothing more: the callback attributes it calls
on its own thread, the session token counters, the sticky interrupt flag (set by
``interrupt()``, cleared only by ``clear_interrupt()`` and at the end of a turn), steering
and a context compressor. A turn plays a *script*: a list of steps, each one of
``("text", str)``, ``("thought", str)``, ``("tool", id, name, args, result)`` (start and
complete), ``("start", id, name, args)`` (start only), ``("complete", id, name, args,
result)`` (complete only), ``("usage", prompt, completion)``, ``("wait_interrupt",)``
(block until interrupted) or ``("raise", message)``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Step = tuple[Any, ...]


@dataclass
class Compressor:
    context_length: int = 131_072
    threshold_tokens: int = 98_304
    last_prompt_tokens: int = 0


@dataclass
class ScriptedAIAgent:
    """``run_agent.AIAgent`` as the adapter sees it."""

    script: list[Step] = field(default_factory=list)
    final: str | None = "done"
    extra: dict[str, Any] = field(default_factory=dict)
    session_id: str = "hermes-1"
    model: str = "scripted-model"
    provider: str = "custom"
    api_key: str = "sk-test"
    base_url: str = "http://127.0.0.1:9/v1"
    api_mode: str = "chat_completions"
    reasoning_config: dict[str, Any] | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    context_compressor: Compressor = field(default_factory=Compressor)
    session_prompt_tokens: int = 0
    session_completion_tokens: int = 0
    session_reasoning_tokens: int = 0
    session_cache_read_tokens: int = 0
    stream_delta_callback: Callable[..., None] | None = None
    reasoning_callback: Callable[..., None] | None = None
    thinking_callback: Callable[..., None] | None = None
    tool_progress_callback: Callable[..., None] | None = None
    tool_start_callback: Callable[..., None] | None = None
    tool_complete_callback: Callable[..., None] | None = None
    step_callback: Callable[..., None] | None = None
    _interrupt_requested: bool = False
    _pending_steer: str | None = None
    closed: bool = False
    calls: list[dict[str, Any]] = field(default_factory=list)
    interrupted_wait: threading.Event = field(default_factory=threading.Event)
    waiting: threading.Event = field(default_factory=threading.Event)

    def interrupt(self, message: str | None = None) -> None:
        self._interrupt_requested = True
        self.interrupted_wait.set()

    def reset_session_state(self) -> None:
        """Hermes zeroes its session counters and the compressor's state."""
        self.session_prompt_tokens = self.session_completion_tokens = 0
        self.session_reasoning_tokens = self.session_cache_read_tokens = 0
        self.context_compressor.last_prompt_tokens = 0

    def clear_interrupt(self) -> None:
        self._interrupt_requested = False
        self.interrupted_wait.clear()

    def steer(self, text: str) -> bool:
        self._pending_steer = text
        return bool(text.strip())

    def switch_model(
        self, new_model: str, new_provider: str, api_key: str, base_url: str, api_mode: str
    ) -> None:
        if new_model == "unknown-model":
            raise RuntimeError("no such model")
        self.model = new_model

    def close(self) -> None:
        self.closed = True

    def _compress_context(
        self, messages: list[dict[str, Any]], system_message: str, **kw: Any
    ) -> tuple[list[dict[str, Any]], str]:
        self.calls.append({"compress": kw})
        return [{"role": "user", "content": "summary"}, *messages[-1:]], system_message

    def run_conversation(
        self,
        user_message: str | list[dict[str, Any]],
        conversation_history: list[dict[str, Any]] | None = None,
        task_id: str | None = None,
    ) -> dict[str, Any]:
        self.calls.append({"user_message": user_message, "task_id": task_id})
        interrupted = self._interrupt_requested
        for step in [] if interrupted else self.script:
            kind = step[0]
            if kind == "text" and self.stream_delta_callback:
                self.stream_delta_callback(step[1])
            elif kind == "thought" and self.reasoning_callback:
                self.reasoning_callback(step[1])
            elif kind in ("tool", "start") and self.tool_start_callback:
                self.tool_start_callback(step[1], step[2], step[3])
            if kind in ("tool", "complete") and self.tool_complete_callback:
                self.tool_complete_callback(step[1], step[2], step[3], step[-1])
            elif kind == "usage":
                self.session_prompt_tokens += step[1]
                self.session_completion_tokens += step[2]
            elif kind == "wait_interrupt":
                self.waiting.set()
                interrupted = self.interrupted_wait.wait(timeout=10)
                break
            elif kind == "raise":
                raise RuntimeError(step[1])
        if self.stream_delta_callback:
            self.stream_delta_callback(None)
        self.clear_interrupt()  # Hermes clears the flag when a turn finishes
        history = list(conversation_history or [])
        messages = [*history, {"role": "user", "content": user_message}]
        if self.final:
            messages.append({"role": "assistant", "content": self.final})
        return {
            "final_response": "Operation interrupted." if interrupted else self.final,
            "messages": messages,
            "interrupted": interrupted,
            "completed": not interrupted,
            "failed": False,
            **self.extra,
        }
