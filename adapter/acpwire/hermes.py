"""The real Hermes ``AIAgent`` behind the seam, when ``hermes-agent`` is installed.

Hermes' agent is synchronous and reports through attributes it calls back on its own
thread. :class:`HermesAgent` sets those callbacks per turn, translating them to the
seam's :class:`~acpwire.agent.seam.TurnHooks`, and fixes on this side what the Hermes ACP
adapter got wrong: tool ids are minted at start and matched at completion (FIFO per tool
name, as Hermes sends no ids), every started call gets an end (still-open calls are
failed at turn end), ``final_response`` may be None, usage is reported per turn (Hermes
counts per session), and the approval callback is thread-local to the turn's thread.
Everything Hermes-specific is imported lazily, so this module imports without Hermes.
"""

from __future__ import annotations

import importlib
import json
import logging
import sys
import threading
import uuid
from collections import defaultdict, deque
from typing import Any

from acpwire.agent.seam import (
    CommandProposal,
    Message,
    ToolEnd,
    ToolStart,
    TurnHooks,
    TurnResult,
    TurnUsage,
)

logger = logging.getLogger(__name__)
_COUNTERS = ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cache_read_tokens")


def available() -> bool:
    """Whether the Hermes agent can be imported here."""
    try:
        importlib.import_module("run_agent")
    except Exception:
        return False
    return True


def _args(raw: object) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return {"raw": raw}
        return value if isinstance(value, dict) else {"raw": value}
    return {} if raw is None else {"raw": raw}


class _Calls:
    """Tool-call ids for one turn: minted at start, matched FIFO per tool name."""

    def __init__(self) -> None:
        self.open: dict[str, deque[tuple[str, dict[str, Any]]]] = defaultdict(deque)

    def start(self, name: str, args: dict[str, Any]) -> str:
        call_id = f"tc-{uuid.uuid4().hex[:12]}"
        self.open[name].append((call_id, args))
        return call_id

    def end(self, name: str) -> tuple[str, dict[str, Any]] | None:
        queue = self.open.get(name)
        return queue.popleft() if queue else None

    def remaining(self) -> list[tuple[str, str, dict[str, Any]]]:
        return [(cid, name, args) for name, q in self.open.items() for cid, args in q]


class HermesAgent:
    """A ``SyncAgent`` over ``run_agent.AIAgent``."""

    def __init__(self, session_id: str, cwd: str, model: str | None = None) -> None:
        run_agent = importlib.import_module("run_agent")
        kwargs: dict[str, Any] = {"platform": "acp", "quiet_mode": True, "session_id": session_id}
        if model:
            kwargs["model"] = model
        self._agent: Any = run_agent.AIAgent(**kwargs)
        self._agent.session_cwd = cwd
        self._agent._print_fn = lambda *a, **k: print(*a, **{**k, "file": sys.stderr})
        self._lock = threading.Lock()
        self._running = False

    @property
    def internal_session_id(self) -> str:
        return str(self._agent.session_id)

    @property
    def model(self) -> str:
        return str(self._agent.model)

    def set_model(self, model: str) -> None:
        self._agent.model = model

    def set_reasoning_effort(self, effort: str | None) -> None:
        # Hermes reads a reasoning config dict on the agent; None restores its default.
        self._agent.reasoning_config = {"enabled": True, "effort": effort} if effort else None

    def tool_descriptions(self) -> list[tuple[str, str]]:
        out = []
        for tool in getattr(self._agent, "tools", None) or []:
            fn = tool.get("function", {}) if isinstance(tool, dict) else {}
            out.append((str(fn.get("name", "?")), str(fn.get("description", "")).split("\n")[0]))
        return out

    def close(self) -> None:
        return None

    def interrupt(self) -> None:
        with self._lock:
            if not self._running:
                return  # Hermes' interrupt flag is sticky: never set it while idle
        self._agent.interrupt()

    def steer(self, text: str) -> bool:
        with self._lock:
            running = self._running
        return bool(running and self._agent.steer(text))

    def compress(self, history: list[Message], *, force: bool) -> list[Message]:
        db = getattr(self._agent, "_session_db", None)
        self._agent._session_db = None  # no database split: the public id stays stable
        try:
            messages, _ = self._agent._compress_context(
                history, getattr(self._agent, "_cached_system_prompt", None), force=force
            )
        finally:
            self._agent._session_db = db
        return list(messages)

    def context_usage(self, history: list[Message]) -> tuple[int, int]:
        compressor = getattr(self._agent, "context_compressor", None)
        size = int(getattr(compressor, "context_length", 0) or 0)
        used = int(getattr(compressor, "last_prompt_tokens", 0) or 0)
        if not used:
            used = sum(len(json.dumps(m, default=str)) for m in history) // 4
        return used, size

    def _counters(self) -> dict[str, int]:
        return {name: int(getattr(self._agent, f"session_{name}", 0) or 0) for name in _COUNTERS}

    def run_turn(
        self,
        content: str | list[dict[str, Any]],
        history: list[Message],
        *,
        cwd: str,
        hooks: TurnHooks,
    ) -> TurnResult:
        calls = _Calls()
        streamed = False

        def on_delta(text: str | None) -> None:
            nonlocal streamed
            if text:
                streamed = True
                hooks.on_text_delta(text)

        def on_progress(
            event: str, name: str, preview: object = None, args: object = None, **kw: Any
        ) -> None:
            if event == "tool.started":
                parsed = _args(args)
                hooks.on_tool_start(ToolStart(calls.start(name, parsed), name, parsed))
            elif event == "tool.completed":
                found = calls.end(name)
                if found is not None:
                    result = kw.get("result")
                    hooks.on_tool_end(
                        ToolEnd(
                            found[0],
                            name,
                            found[1],
                            "" if result is None else str(result),
                            bool(kw.get("is_error")),
                        )
                    )

        def on_step(_count: int, prev_tools: list[dict[str, Any]] | None = None) -> None:
            for item in prev_tools or []:  # completions Hermes reports only through the next step
                name = str(item.get("name", ""))
                found = calls.end(name)
                if found is not None:
                    hooks.on_tool_end(
                        ToolEnd(found[0], name, found[1], str(item.get("result") or ""))
                    )

        def approve(
            command: str, description: str, *, allow_permanent: bool = True, **_: Any
        ) -> str:
            return hooks.approve_command(CommandProposal(command, description, allow_permanent))

        agent = self._agent
        agent.stream_delta_callback = on_delta

        def on_reasoning(text: str | None) -> None:
            if text:
                hooks.on_thought_delta(text)

        agent.reasoning_callback = on_reasoning
        agent.thinking_callback = None
        agent.tool_progress_callback = on_progress
        agent.step_callback = on_step
        before_id, before = self.internal_session_id, self._counters()
        terminal = importlib.import_module("tools.terminal_tool")
        previous = (
            terminal._get_approval_callback()
            if hasattr(terminal, "_get_approval_callback")
            else None
        )
        terminal.set_approval_callback(approve)
        with self._lock:
            self._running = True
        try:
            result: dict[str, Any] = agent.run_conversation(
                user_message=content, conversation_history=history, task_id=self.internal_session_id
            )
        except Exception as exc:
            logger.exception("Hermes turn failed")
            return TurnResult(messages=history, stop="error", error=str(exc))
        finally:
            with self._lock:
                self._running = False
            terminal.set_approval_callback(previous)
        for call_id, name, args in calls.remaining():
            hooks.on_tool_end(
                ToolEnd(call_id, name, args, "The turn ended before this tool call finished.", True)
            )
        if self.internal_session_id != before_id:
            hooks.on_internal_session_id(self.internal_session_id, "compression")
        after = self._counters()
        usage = TurnUsage(
            input_tokens=after["prompt_tokens"] - before["prompt_tokens"],
            output_tokens=after["completion_tokens"] - before["completion_tokens"],
            reasoning_tokens=after["reasoning_tokens"] - before["reasoning_tokens"],
            cached_read_tokens=after["cache_read_tokens"] - before["cache_read_tokens"],
        )
        interrupted = bool(result.get("interrupted"))
        return TurnResult(
            messages=list(result.get("messages") or history),
            final_text=result.get("final_response") or None,
            stop="cancelled" if interrupted else "end_turn",
            usage=usage,
            pending_steer=result.get("pending_steer"),
            streamed=streamed and not result.get("response_transformed"),
        )


class HermesAgentFactory:
    """Builds :class:`HermesAgent` per session; Hermes resolves its own provider."""

    name = "Hermes AIAgent"

    def __init__(self) -> None:
        self._problem: str | None = None

    @property
    def problem(self) -> str | None:
        return self._problem

    @property
    def provider(self) -> str:
        try:
            runtime = importlib.import_module(
                "hermes_cli.runtime_provider"
            ).resolve_runtime_provider()
        except Exception as exc:
            self._problem = f"Hermes has no provider: {exc}"
            return "none"
        provider = (
            runtime.get("provider")
            if isinstance(runtime, dict)
            else getattr(runtime, "provider", None)
        )
        return str(provider or "hermes")

    def configured(self) -> bool:
        return self.provider != "none"

    def available_models(self) -> list[str]:
        return []

    def reset(self) -> None:
        self._problem = None

    def create(
        self, session_id: str, cwd: str, model: str | None, internal_id: str | None = None
    ) -> HermesAgent:
        # Hermes keys its own history by session id: resume the internal one.
        return HermesAgent(internal_id or session_id, cwd, model)
