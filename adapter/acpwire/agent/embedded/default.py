"""The embedded default agent: a tool-using chat loop over an OpenAI-compatible endpoint.

:class:`DefaultAgent` implements :class:`~acpwire.agent.seam.SyncAgent`: its session
state, model settings, interrupt and steering, and the start and end of a turn. One turn
calls the model, runs the tool calls it asks for, feeds the results back, and repeats
until the model answers without tools (or a limit, an interrupt or an error stops it):
the loop is :class:`~acpwire.agent.embedded._loop.TurnLoop`, mixed in. Each turn owns a fresh
cancel token and its hooks, so nothing leaks from one turn into the next. The history is
compressed before a model call when it nears the context window (what the model is
sent, its size and its summary: :mod:`._context`).
"""

from __future__ import annotations

import logging
import threading
import uuid
from typing import Any

from acpwire.agent.cancel import CancelToken
from acpwire.agent.config import ConfigError
from acpwire.agent.embedded import _context as context
from acpwire.agent.embedded._loop import TOOL_RESULT_CAP, Turn, TurnLoop
from acpwire.agent.embedded.llm import ChatClient
from acpwire.agent.embedded.provider import AgentConfig
from acpwire.agent.embedded.toolcalls import answer_dangling_calls
from acpwire.agent.embedded.tools import (
    CommandRunner,
    LocalRunner,
    SessionState,
    ToolRegistry,
    default_tools,
)
from acpwire.agent.embedded.tools.todo import restore_todos
from acpwire.agent.seam import Message, TurnHooks, TurnResult
from acpwire.config.limits import ToolLimits

__all__ = ["TOOL_RESULT_CAP", "DefaultAgent"]

log = logging.getLogger(__name__)


class DefaultAgent(TurnLoop):
    """The embedded agent. ``config`` must name an endpoint and a model
    (see :func:`acpwire.agent.embedded.provider.complete_config`)."""

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
        self._turn: Turn | None = None
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
        turn = Turn(CancelToken(), hooks)
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
