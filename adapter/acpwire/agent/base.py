""":class:`BaseAgent`: a :class:`~acpwire.agent.seam.SyncAgent` that needs only its turn.

Subclass it and write :meth:`BaseAgent.run_turn`; everything else the backend may ask has
a default: no compression (the history is kept whole), no steering (``/steer`` then says
so), no tools to list, a model name that follows the picker, and an :meth:`interrupt`
that sets :attr:`BaseAgent.interrupted` for the running turn to check. :meth:`reply`
builds the usual :class:`~acpwire.agent.seam.TurnResult`.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any

from acpwire.agent.factory import UNWRITTEN, SessionContext
from acpwire.agent.seam import Message, StopKind, TurnHooks, TurnResult

__all__ = ["BaseAgent"]

Content = str | list[dict[str, Any]]
RunTurn = Callable[..., TurnResult]


def _tracked(run_turn: RunTurn) -> RunTurn:
    """Wrap a subclass's ``run_turn`` so an interrupt affects only the turn it hits."""

    @functools.wraps(run_turn)
    def wrapper(self: BaseAgent, *args: Any, **kwargs: Any) -> TurnResult:
        with self._turn_lock:
            self._interrupted.clear()
            self._turns += 1
        try:
            return run_turn(self, *args, **kwargs)
        finally:
            with self._turn_lock:
                self._turns -= 1
                self._interrupted.clear()

    wrapper.__acpwire_tracked__ = True  # type: ignore[attr-defined]
    return wrapper


class BaseAgent:
    """A synchronous agent with defaults for everything but the turn.

    ``context`` is what the factory was handed; :attr:`model` and
    :attr:`internal_session_id` come from it. A turn runs in a worker thread: block as
    you like, report through ``hooks``, and return when :attr:`interrupted` is set.
    """

    default_model = "default"
    """The model name shown when the session asked for none."""
    context_window = 0
    """Tokens of context the model takes; 0 = unknown (no usage figure is shown)."""

    def __init__(self, context: SessionContext) -> None:
        self.context = context
        self._model = context.model or self.default_model
        self._internal_id = context.internal_id
        self.reasoning_effort: str | None = None
        self._interrupted = threading.Event()
        self._turn_lock = threading.Lock()
        self._turns = 0

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("run_turn")
        if own is not None and inspect.iscoroutinefunction(own):
            raise TypeError(
                f"{cls.__qualname__}.run_turn is async: BaseAgent.run_turn is synchronous (it "
                "runs in a worker thread): write def run_turn and call blocking code"
            )
        if own is not None and not getattr(own, "__acpwire_tracked__", False):
            cls.run_turn = _tracked(own)  # type: ignore[method-assign]

    # -- the turn ------------------------------------------------------------------------

    def run_turn(
        self, content: Content, history: list[Message], *, cwd: str, hooks: TurnHooks
    ) -> TurnResult:
        """Run one prompt to completion (blocking). Return :meth:`reply` of the answer;
        report a failure as ``stop="error"`` rather than raising."""
        raise NotImplementedError(f"{type(self).__name__} must implement run_turn")

    setattr(run_turn, UNWRITTEN, True)  # agent_problem() tells a subclass without one

    @property
    def interrupted(self) -> bool:
        """Whether the running turn was cancelled: stop as soon as you can."""
        return self._interrupted.is_set()

    def interrupt(self) -> None:
        with self._turn_lock:
            if self._turns:  # an interrupt while idle must not stop the next turn
                self._interrupted.set()

    def reply(
        self,
        content: Content,
        history: list[Message],
        text: str,
        *,
        stop: StopKind | None = None,
        streamed: bool = True,
        extra: list[Message] | None = None,
    ) -> TurnResult:
        """The result of a turn that answered ``text`` to the prompt ``content``: the new
        history is ``history``, the user's message, ``extra`` (tool call and tool result
        messages, in OpenAI chat shape) and the assistant's answer. ``stop`` defaults to
        ``cancelled`` after an interrupt, else ``end_turn``; ``streamed``: whether
        ``text`` already went out through ``hooks.on_text_delta``."""
        messages = [*history, {"role": "user", "content": content}, *(extra or [])]
        messages.append({"role": "assistant", "content": text})
        if stop is None:
            stop = "cancelled" if self.interrupted else "end_turn"
        return TurnResult(messages=messages, final_text=text, stop=stop, streamed=streamed)

    # -- defaults for everything else ----------------------------------------------------

    @property
    def internal_session_id(self) -> str:
        return self._internal_id

    @property
    def model(self) -> str:
        return self._model

    def set_model(self, model: str) -> None:
        self._model = model

    def set_reasoning_effort(self, effort: str | None) -> None:
        self.reasoning_effort = effort

    def steer(self, text: str) -> bool:
        """Not supported: False (the user is told no turn takes guidance)."""
        return False

    def compress(self, history: list[Message], *, force: bool) -> list[Message]:
        """No compression: the history is kept whole."""
        return history

    def context_usage(self, history: list[Message]) -> tuple[int, int]:
        """(about four characters per token, :attr:`context_window`)."""
        return sum(len(str(m.get("content") or "")) for m in history) // 4, self.context_window

    def compression_threshold(self) -> int:
        return self.context_window

    def reset(self) -> None:
        return None

    def tool_descriptions(self) -> list[tuple[str, str]]:
        return []

    def close(self) -> None:
        return None
