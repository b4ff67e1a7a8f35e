""":class:`HermesAgent`: the seam's ``SyncAgent`` over one Hermes ``run_agent.AIAgent``.

A turn installs the callbacks of :mod:`acpwire.hermes.turn`, binds Hermes' approval
plumbing, runs ``run_conversation`` and fixes on this side what the Hermes ACP adapter
gets wrong: tool ids come from ``tool_start_callback``/``tool_complete_callback`` (made
unique per session) and every started call gets an end; usage is per turn (Hermes counts
per session); ``final_response`` may be None; an idle ``interrupt()`` never leaves
Hermes' sticky flag set.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any

from acpwire.agent.cancel import CancelToken
from acpwire.agent.seam import Message, ToolEnd, TurnHooks, TurnResult
from acpwire.config.limits import ToolLimits
from acpwire.hermes.boundary import TurnBinding, shape_toolset
from acpwire.hermes.mcp_tools import HermesTools
from acpwire.hermes.modules import hermes_module
from acpwire.hermes.results import COUNTERS, turn_result, usage_delta, without_bookkeeping
from acpwire.hermes.turn import CallIds, bind_turn, turn_callbacks

logger = logging.getLogger(__name__)


class HermesAgent:
    """A ``SyncAgent`` over one ``run_agent.AIAgent`` (typed ``Any``: Hermes is optional).

    ``task_id`` is the stable public session id: Hermes keys the tools' cwd and caches by
    it, while ``agent.session_id`` (the internal id) may rotate. ``tools`` takes the
    editor's MCP tools (:mod:`acpwire.hermes.mcp_tools`).
    """

    def __init__(
        self,
        agent: Any,
        *,
        task_id: str,
        cwd: str,
        home_provider: str = "",
        limits: ToolLimits | None = None,
    ) -> None:
        self._agent = agent
        self._limits = limits or ToolLimits()
        self._home_provider = home_provider  # the configured one (model_choice)
        self._task_id = task_id
        self._lock = threading.Lock()
        self._running = False
        self._used_ids: set[str] = set()
        self._default_reasoning = getattr(agent, "reasoning_config", None)
        self._turn_cancel: CancelToken | None = None
        self.tools = HermesTools(agent, task_id, lambda: self._turn_cancel)
        agent.session_cwd = cwd
        agent._print_fn = lambda *a, **k: print(*a, **{**k, "file": sys.stderr})
        shape_toolset(agent)  # what acpwire's boundary serves (docs/SECURITY.md)

    @property
    def internal_session_id(self) -> str:
        return str(self._agent.session_id)

    @property
    def model(self) -> str:
        return str(self._agent.model or "")

    @property
    def provider(self) -> str:
        return str(self._agent.provider or "")

    @property
    def model_choice(self) -> str:
        """The model as the session stores it: ``provider:model`` once the session has
        moved to a provider other than the configured one, so a restore finds it again."""
        provider = self.provider
        if provider and self._home_provider and provider != self._home_provider:
            return f"{provider}:{self.model}"
        return self.model

    def runtime_facts(self) -> dict[str, str]:
        """Provider, base URL and API mode: the snapshot hermes-acp stores with a session
        (``model_config``) so a restore reaches the same endpoint."""
        a = self._agent
        return {
            name: value.strip()
            for name in ("provider", "base_url", "api_mode")
            if isinstance(value := getattr(a, name, None), str) and value.strip()
        }

    def persists_to(self, db: Any) -> bool:
        """Whether Hermes writes this session's messages to ``db`` itself (it appends
        them as they happen once its session row exists)."""
        a = self._agent
        return getattr(a, "_session_db", None) is db and bool(
            getattr(a, "_session_db_created", False)
        )

    def set_model(self, model: str) -> None:
        """``model``, or ``provider:model`` (Hermes' own syntax, as hermes-acp accepts it):
        another provider's credentials and endpoint come from Hermes' configuration."""
        a = self._agent
        try:
            provider, name = split_model_choice(model, a.provider or "custom")
            runtime = {"api_key": a.api_key, "base_url": a.base_url, "api_mode": a.api_mode}
            if provider != a.provider:
                runtime = provider_runtime(provider)
                provider = str(runtime.get("provider") or provider)
            a.switch_model(
                name,
                provider,
                runtime.get("api_key") or "",
                runtime.get("base_url") or "",
                runtime.get("api_mode") or "",
            )
        except Exception as exc:
            raise ValueError(f"Hermes cannot switch to model {model!r}: {exc}") from exc

    def set_reasoning_effort(self, effort: str | None) -> None:
        self._agent.reasoning_config = (
            {"enabled": True, "effort": effort} if effort else self._default_reasoning
        )

    def tool_descriptions(self) -> list[tuple[str, str]]:
        out = []
        for tool in getattr(self._agent, "tools", None) or []:
            fn = tool.get("function", {}) if isinstance(tool, dict) else {}
            out.append((str(fn.get("name", "?")), str(fn.get("description", "")).split("\n")[0]))
        return out

    def close(self) -> None:
        terminal = hermes_module("tools.terminal_tool")
        with contextlib.suppress(Exception):
            if terminal is not None:
                terminal.clear_task_env_overrides(self._task_id)
            self._agent.close()

    def interrupt(self) -> None:
        # Under the lock, so a turn cannot end between the check and the call: Hermes'
        # flag is sticky, set while idle it would cancel the next turn at once.
        with self._lock:
            if self._running:
                self._agent.interrupt()
                if self._turn_cancel is not None:
                    self._turn_cancel.cancel()  # releases a waiting MCP tool call

    def steer(self, text: str) -> bool:
        with self._lock:
            return self._running and bool(self._agent.steer(text))

    def _estimate(self, history: list[Message]) -> int:
        metadata = hermes_module("agent.model_metadata")
        if metadata is not None:
            with contextlib.suppress(Exception):
                return int(
                    metadata.estimate_request_tokens_rough(
                        history,
                        system_prompt=getattr(self._agent, "_cached_system_prompt", "") or "",
                        tools=getattr(self._agent, "tools", None) or None,
                    )
                )
        return sum(len(json.dumps(m, default=str)) for m in history) // 4

    def context_usage(self, history: list[Message]) -> tuple[int, int]:
        compressor = getattr(self._agent, "context_compressor", None)
        return self._estimate(history), int(getattr(compressor, "context_length", 0) or 0)

    def compression_threshold(self) -> int:
        """Hermes' own trigger (``threshold_tokens``, from its compression settings)."""
        compressor = getattr(self._agent, "context_compressor", None)
        threshold = getattr(compressor, "threshold_tokens", None)
        if isinstance(threshold, int | float) and threshold > 0:
            return int(threshold)
        return int(0.8 * int(getattr(compressor, "context_length", 0) or 0))

    def reset(self) -> None:
        """Hermes' per-session counters and compressor state start over, as hermes-acp's
        ``/reset`` does (``AIAgent.reset_session_state``)."""
        reset = getattr(self._agent, "reset_session_state", None)
        if callable(reset):
            reset()

    def compress(self, history: list[Message], *, force: bool) -> list[Message]:
        messages, _ = self._agent._compress_context(
            history,
            getattr(self._agent, "_cached_system_prompt", "") or "",
            approx_tokens=self._estimate(history),
            task_id=self._task_id,
            force=force,
        )
        return without_bookkeeping(messages)

    def _counters(self) -> dict[str, int]:
        return {name: int(getattr(self._agent, f"session_{name}", 0) or 0) for name in COUNTERS}

    def _install(self, callbacks: Mapping[str, Callable[..., None] | None]) -> None:
        for name, callback in callbacks.items():
            setattr(self._agent, name, callback)

    def run_turn(
        self,
        content: str | list[dict[str, Any]],
        history: list[Message],
        *,
        cwd: str,
        hooks: TurnHooks,
    ) -> TurnResult:
        self._agent.session_cwd = cwd  # where Hermes' Codex runtime would start
        calls = CallIds(self._used_ids)
        streamed = threading.Event()
        cancel = CancelToken()
        binding = TurnBinding(
            hooks,
            cwd,
            cancel,
            calls.editor_id,
            self._agent,
            self._limits,
            mcp_tool=self.tools.tool,
        )
        callbacks = turn_callbacks(hooks, calls, streamed, binding.failed)
        self._install(callbacks)
        before_id, before = self.internal_session_id, self._counters()
        result: Mapping[str, Any]
        with contextlib.ExitStack() as stack:
            try:
                bind_turn(stack, binding, self._task_id)
                with self._lock:
                    self._agent.clear_interrupt()
                    self._running = True
                    self._turn_cancel = cancel
                result = self._agent.run_conversation(
                    user_message=content, conversation_history=history, task_id=self._task_id
                )
            except Exception as exc:
                logger.exception("Hermes turn failed")
                result = {"failed": True, "error": f"{type(exc).__name__}: {exc}"}
            finally:
                with self._lock:
                    self._running = False
                    self._turn_cancel = None
                    self._agent.clear_interrupt()
                self._install(dict.fromkeys(callbacks))
        for call_id, name, args in calls.remaining():
            end = ToolEnd(call_id, name, args, "The turn ended before this call finished.", True)
            hooks.on_tool_end(end)
        if self.internal_session_id != before_id:
            hooks.on_internal_session_id(self.internal_session_id, "compression")
        usage = usage_delta(before, self._counters())
        return turn_result(result, content, history, streamed=streamed.is_set(), usage=usage)


def split_model_choice(choice: str, current_provider: str) -> tuple[str, str]:
    """``(provider, model)`` of ``model`` or ``provider:model`` (Hermes' parser: a prefix
    counts only when it names a provider it knows)."""
    models = hermes_module("hermes_cli.models")
    if models is None:
        return current_provider, choice.strip()
    provider, name = models.parse_model_input(choice, current_provider)
    return str(provider), str(name)


def provider_runtime(provider: str) -> dict[str, Any]:
    """Credentials, endpoint and API mode of ``provider`` from Hermes' configuration."""
    resolve = hermes_module("hermes_cli.runtime_provider")
    if resolve is None:
        raise ValueError("this Hermes cannot resolve other providers")
    return dict(resolve.resolve_runtime_provider(requested=provider))
