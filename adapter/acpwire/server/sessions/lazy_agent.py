"""An agent built on first real use: restored sessions answer list, load and resume fast.

Restoring a session from the database needs its history, not its agent; building the
agent (and importing its model client) waits until something asks the agent to work.
Until then its model name and internal id are the stored ones.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from acpwire.agent.seam import Message, SyncAgent, TurnHooks, TurnResult


class LazyAgent:
    """A ``SyncAgent`` that builds the real one on first use (thread-safe)."""

    def __init__(
        self, build: Callable[[str | None], SyncAgent], *, model: str | None, internal_id: str
    ) -> None:
        self._build = build
        self._model = model
        self._effort: str | None = None
        self._internal_id = internal_id
        self._agent: SyncAgent | None = None
        self._lock = threading.Lock()

    @property
    def built(self) -> bool:
        return self._agent is not None

    def real(self) -> SyncAgent:
        with self._lock:
            if self._agent is None:
                agent = self._build(self._model)
                agent.set_reasoning_effort(self._effort)
                self._agent = agent
            return self._agent

    @property
    def internal_session_id(self) -> str:
        return self._agent.internal_session_id if self._agent is not None else self._internal_id

    @property
    def model(self) -> str:
        return self._agent.model if self._agent is not None else (self._model or "")

    def run_turn(
        self,
        content: str | list[dict[str, Any]],
        history: list[Message],
        *,
        cwd: str,
        hooks: TurnHooks,
    ) -> TurnResult:
        return self.real().run_turn(content, history, cwd=cwd, hooks=hooks)

    def interrupt(self) -> None:
        if self._agent is not None:  # nothing runs on an agent that does not exist yet
            self._agent.interrupt()

    def steer(self, text: str) -> bool:
        return self._agent.steer(text) if self._agent is not None else False

    def compress(self, history: list[Message], *, force: bool) -> list[Message]:
        return self.real().compress(history, force=force)

    def context_usage(self, history: list[Message]) -> tuple[int, int]:
        return self.real().context_usage(history)

    def compression_threshold(self) -> int:
        return self.real().compression_threshold()

    def reset(self) -> None:
        if self._agent is not None:  # an agent not built yet has nothing to forget
            self._agent.reset()

    def tool_descriptions(self) -> list[tuple[str, str]]:
        return self.real().tool_descriptions()

    def set_model(self, model: str) -> None:
        with self._lock:
            if self._agent is None:
                self._model = model
                return
        self._agent.set_model(model)

    def set_reasoning_effort(self, effort: str | None) -> None:
        with self._lock:
            if self._agent is None:
                self._effort = effort
                return
        self._agent.set_reasoning_effort(effort)

    def close(self) -> None:
        if self._agent is not None:
            self._agent.close()

    def __getattr__(self, name: str) -> Any:
        # Extra capabilities of the real agent (a tool registry for MCP servers).
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.real(), name)
