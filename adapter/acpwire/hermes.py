"""The real Hermes ``AIAgent`` (hermes-agent 0.19.0) behind the seam, when it is installed.

Hermes' agent is synchronous and reports through callback attributes it calls on its own
threads. :class:`HermesAgent` sets them for one turn and translates them to the seam's
:class:`~acpwire.agent.seam.TurnHooks`, fixing on this side what the Hermes ACP adapter
gets wrong: tool ids come from ``tool_start_callback``/``tool_complete_callback`` (made
unique per session) and every started call gets an end; usage is per turn (Hermes counts
per session); ``final_response`` may be None; an idle ``interrupt()`` never leaves the
sticky flag set. Per turn it binds Hermes' approval plumbing: the thread-local terminal
approval callback, the interactive-context flag (without it Hermes auto-approves
dangerous commands), the edit-approval requester and the session's tool cwd. Approvals
are answered "once" to Hermes: remembering them is acpwire's job, not Hermes' allowlist.

Everything Hermes-specific is imported lazily and typed ``Any``, so this module imports
(and type-checks) without Hermes.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import importlib.util
import json
import logging
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from acpwire.agent.config import ConfigError
from acpwire.agent.seam import (
    CommandProposal,
    EditProposal,
    Message,
    PlanItem,
    StopKind,
    ToolEnd,
    ToolStart,
    TurnHooks,
    TurnResult,
    TurnUsage,
)

logger = logging.getLogger(__name__)

TOOLSET = "hermes-acp"
COUNTERS = ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cache_read_tokens")
_STATUSES = ("pending", "in_progress", "completed", "cancelled")
_SETUP_HINT = "run `hermes model` (Hermes reads $HERMES_HOME/config.yaml, default ~/.hermes)"
_TURN_CWD: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "acpwire_hermes_turn_cwd", default=None
)


def available() -> bool:
    """Whether hermes-agent is installed here (found, not imported: importing it takes
    seconds, which the first session pays instead)."""
    try:
        return all(importlib.util.find_spec(name) for name in ("run_agent", "hermes_cli"))
    except (ImportError, ValueError):
        return False


_MISSING: set[str] = set()


def _module(name: str) -> Any:
    """A Hermes module, or None (logged once) when this Hermes lacks it."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        if name not in _MISSING:
            _MISSING.add(name)
            logger.warning(
                "Hermes module %s is unavailable (%s); skipping what needs it", name, exc
            )
        return None


def tool_args(raw: object) -> dict[str, Any]:
    """Tool arguments as a dict: JSON text is parsed; anything else lands under ``raw``."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return {"raw": raw}
        return value if isinstance(value, dict) else {"raw": value}
    return {} if raw is None else {"raw": raw}


def usage_delta(before: Mapping[str, int], after: Mapping[str, int]) -> TurnUsage:
    """One turn's usage from Hermes' session counters (``session_<name>``) around it."""

    def delta(name: str) -> int:
        # A reset of the counters during the turn (e.g. /reset) must not go negative.
        return max(0, after.get(name, 0) - before.get(name, 0))

    return TurnUsage(
        input_tokens=delta("prompt_tokens"),
        output_tokens=delta("completion_tokens"),
        reasoning_tokens=delta("reasoning_tokens"),
        cached_read_tokens=delta("cache_read_tokens"),
    )


def plan_items(result: str) -> list[PlanItem] | None:
    """The todo list a ``todo`` result reports (JSON, maybe followed by a hint), or None."""
    try:
        value, _ = json.JSONDecoder().raw_decode(result.strip())
    except ValueError:
        return None
    todos = value.get("todos") if isinstance(value, dict) else None
    if not isinstance(todos, list):
        return None
    items: list[PlanItem] = []
    for index, todo in enumerate(todos):
        if not isinstance(todo, dict) or not todo.get("content"):
            continue
        status = todo.get("status")
        items.append(
            PlanItem(
                id=str(todo.get("id", index + 1)),
                content=str(todo["content"]),
                status=status if status in _STATUSES else "pending",
            )
        )
    return items


def stop_kind(result: Mapping[str, Any]) -> StopKind:
    """The ACP stop reason of a Hermes turn result."""
    if result.get("interrupted"):
        return "cancelled"
    if result.get("failed"):
        return "error"
    reason = str(result.get("turn_exit_reason") or "")
    if reason == "budget_exhausted":
        return "max_turn_requests"
    if "finish_reason=length" in reason:
        return "max_tokens"
    return "end_turn"


class CallIds:
    """Tool-call ids of one turn: Hermes' ids, made unique over the session.

    ``used`` is shared by the session's turns: a provider id seen before (scripted
    models reuse ``call_0``) gets a fresh ``tc-`` id so a client never merges two calls.
    """

    def __init__(self, used: set[str]) -> None:
        self._used = used
        self._lock = threading.Lock()
        self._open: dict[str, tuple[str, str, dict[str, Any], float]] = {}
        self._claimed: set[str] = set()

    def start(self, hermes_id: str, name: str, args: dict[str, Any]) -> str:
        with self._lock:
            call_id = hermes_id
            if not call_id or call_id in self._used or call_id in self._open:
                call_id = f"tc-{uuid.uuid4().hex[:12]}"
            self._used.add(call_id)
            self._open[hermes_id or f"?{call_id}"] = (call_id, name, args, time.monotonic())
            return call_id

    def end(self, hermes_id: str, name: str) -> tuple[str, str, dict[str, Any], float] | None:
        """(call id, name, args, seconds since start) of an open call; None if unknown.
        A call Hermes gave no id is matched by name, oldest first."""
        with self._lock:
            key = hermes_id or next(
                (k for k, v in self._open.items() if k.startswith("?") and v[1] == name), ""
            )
            found = self._open.pop(key, None)
        if found is None:
            return None
        return found[0], found[1], found[2], time.monotonic() - found[3]

    def claim(self, name: str, path: str | None, cwd: str) -> str | None:
        """The open ``name`` call an edit approval belongs to (Hermes passes no id):
        the first unclaimed one with ``path``, else the first unclaimed one."""
        with self._lock:
            candidates = [
                (cid, args)
                for cid, n, args, _ in self._open.values()
                if n == name and cid not in self._claimed
            ]
            same = [cid for cid, a in candidates if path and _abspath(a.get("path"), cwd) == path]
            chosen = next(iter(same or [cid for cid, _ in candidates]), None)
            if chosen is not None:
                self._claimed.add(chosen)
            return chosen

    def remaining(self) -> list[tuple[str, str, dict[str, Any]]]:
        with self._lock:
            left = [(cid, name, args) for cid, name, args, _ in self._open.values()]
            self._open.clear()
        return left


def _abspath(path: object, cwd: str) -> str | None:
    if not isinstance(path, str) or not path:
        return None
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except (FileNotFoundError, IsADirectoryError):
        return None


def _v4a_edits(patch: str, cwd: str) -> list[EditProposal]:
    """One proposal per file of a V4A patch, with its full old and new text."""
    from acpwire.agent.tools.v4a import apply_hunks, parse_patch  # the default agent's parser

    edits: list[EditProposal] = []
    for op in parse_patch(patch):
        path = _abspath(op.path, cwd) or op.path
        if op.kind == "add":
            edits.append(EditProposal(path, None, "\n".join(op.added) + "\n" if op.added else ""))
            continue
        old = _read(path)
        if op.kind == "delete":
            edits.append(EditProposal(path, old, ""))
            continue
        new = apply_hunks(old or "", op.hunks, path)
        if op.move_to is None:
            edits.append(EditProposal(path, old, new))
        else:
            target = _abspath(op.move_to, cwd) or op.move_to
            edits += [EditProposal(target, None, new), EditProposal(path, old, "")]
    return edits


def edit_proposals(proposal: Any, cwd: str) -> list[EditProposal]:
    """The seam's proposals for Hermes' ``EditProposal`` (tool_name, path, old_text,
    new_text, arguments), paths resolved against ``cwd``.

    Hermes shows a V4A patch as one pseudo-diff (old text of the first file, the patch as
    new text); here it becomes one real diff per file, as the default agent asks.
    """
    args = proposal.arguments if isinstance(proposal.arguments, dict) else {}
    if proposal.tool_name == "patch" and args.get("mode") == "patch":
        with contextlib.suppress(Exception):  # a patch only Hermes understands: its view
            edits = _v4a_edits(str(args.get("patch") or ""), cwd)
            if edits:
                return edits
    path = str(proposal.path)
    if "," in path:  # Hermes' several-file form: "a, b"
        return [EditProposal(path, proposal.old_text, str(proposal.new_text))]
    full = _abspath(path, cwd) or path
    old_text = proposal.old_text if full == path else _read(full)
    return [EditProposal(full, old_text, str(proposal.new_text))]


def _install_edit_paths(edit_approval: Any) -> None:
    """Make Hermes build edit proposals in the turn's cwd, not the process cwd.

    Installed once: outside an acpwire turn (no cwd bound) Hermes' builder is unchanged.
    """
    original = edit_approval.build_edit_proposal
    if getattr(original, "acpwire_wrapped", False):
        return

    def build(tool_name: str, arguments: dict[str, Any]) -> Any:
        cwd = _TURN_CWD.get()
        path = _abspath(arguments.get("path"), cwd) if cwd else None
        return original(tool_name, {**arguments, "path": path} if path else arguments)

    build.acpwire_wrapped = True  # type: ignore[attr-defined]  # a marker on a function
    edit_approval.build_edit_proposal = build


def _text(result: object) -> str:
    if isinstance(result, str):
        return result
    return "" if result is None else json.dumps(result, default=str)


class HermesAgent:
    """A ``SyncAgent`` over one ``run_agent.AIAgent``.

    ``task_id`` is the stable public session id: Hermes keys the tools' cwd and caches by
    it, while ``agent.session_id`` (the internal id) may rotate.
    """

    def __init__(self, agent: Any, *, task_id: str, cwd: str) -> None:
        self._agent = agent
        self._task_id = task_id
        self._lock = threading.Lock()
        self._running = False
        self._used_ids: set[str] = set()
        self._default_reasoning = getattr(agent, "reasoning_config", None)
        agent.session_cwd = cwd
        agent._print_fn = lambda *a, **k: print(*a, **{**k, "file": sys.stderr})

    @property
    def internal_session_id(self) -> str:
        return str(self._agent.session_id)

    @property
    def model(self) -> str:
        return str(self._agent.model or "")

    def set_model(self, model: str) -> None:
        a = self._agent
        try:
            a.switch_model(model, a.provider, a.api_key or "", a.base_url or "", a.api_mode or "")
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
        terminal = _module("tools.terminal_tool")
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

    def steer(self, text: str) -> bool:
        with self._lock:
            return self._running and bool(self._agent.steer(text))

    def _estimate(self, history: list[Message]) -> int:
        metadata = _module("agent.model_metadata")
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

    def compress(self, history: list[Message], *, force: bool) -> list[Message]:
        messages, _ = self._agent._compress_context(
            history,
            getattr(self._agent, "_cached_system_prompt", "") or "",
            approx_tokens=self._estimate(history),
            task_id=self._task_id,
            force=force,
        )
        return list(messages)

    def _counters(self) -> dict[str, int]:
        return {name: int(getattr(self._agent, f"session_{name}", 0) or 0) for name in COUNTERS}

    def _bind(
        self, stack: contextlib.ExitStack, hooks: TurnHooks, calls: CallIds, cwd: str
    ) -> None:
        """Hermes' per-turn approval plumbing and tool cwd, undone when ``stack`` closes."""

        def approve(command: str, description: str, **kw: Any) -> str:
            allow_permanent = bool(kw.get("allow_permanent", True)) and not kw.get("smart_denied")
            answer = hooks.approve_command(CommandProposal(command, description, allow_permanent))
            return "deny" if answer == "deny" else "once"

        def approve_edit(proposal: Any) -> bool:
            edits = edit_proposals(proposal, cwd)
            call_id = calls.claim(str(proposal.tool_name), edits[0].path, cwd)
            return hooks.approve_edits(call_id or f"edit-{uuid.uuid4().hex[:12]}", edits)

        token = _TURN_CWD.set(cwd)
        stack.callback(_TURN_CWD.reset, token)
        terminal = _module("tools.terminal_tool")
        if terminal is not None:
            terminal.register_task_env_overrides(self._task_id, {"cwd": cwd})
            stack.callback(terminal.set_approval_callback, terminal._get_approval_callback())
            terminal.set_approval_callback(approve)
        approval = _module("tools.approval")
        if approval is not None:
            stack.callback(
                approval.reset_hermes_interactive_context,
                approval.set_hermes_interactive_context(True),
            )
        edits = _module("acp_adapter.edit_approval")
        if edits is not None:
            _install_edit_paths(edits)
            stack.callback(
                edits.reset_edit_approval_requester, edits.set_edit_approval_requester(approve_edit)
            )
        session = _module("gateway.session_context")
        if session is not None:
            # ``cwd`` also makes Hermes' system prompt name the session's directory. No
            # ``platform``: with one, Hermes' approval takes its gateway path and parks
            # dangerous commands as "pending" instead of asking the callback.
            tokens = session.set_session_vars(session_key=self._task_id, cwd=cwd)
            stack.callback(session.clear_session_vars, tokens)

    def _callbacks(
        self, hooks: TurnHooks, calls: CallIds, streamed: threading.Event
    ) -> dict[str, Callable[..., None] | None]:
        def on_delta(text: str | None) -> None:
            if text:
                streamed.set()
                hooks.on_text_delta(text)

        def on_reasoning(text: str | None) -> None:
            if text:
                hooks.on_thought_delta(text)

        def on_start(hermes_id: str | None, name: str, args: object) -> None:
            parsed = tool_args(args)
            hooks.on_tool_start(ToolStart(calls.start(hermes_id or "", name, parsed), name, parsed))

        def on_complete(hermes_id: str | None, name: str, args: object, result: object) -> None:
            found = calls.end(hermes_id or "", name)
            if found is None:  # no start seen: show one, so that the end pairs with it
                on_start(hermes_id, name, args)
                found = calls.end(hermes_id or "", name)
            if found is None:
                return
            call_id, _, start_args, seconds = found
            text = _text(result)
            hooks.on_tool_end(ToolEnd(call_id, name, start_args, text, duration_s=seconds))
            items = plan_items(text) if name == "todo" else None
            if items is not None:
                hooks.on_plan(items)

        return {
            "stream_delta_callback": on_delta,
            "reasoning_callback": on_reasoning,
            "tool_start_callback": on_start,
            "tool_complete_callback": on_complete,
            # Spinner text and id-less progress events: the callbacks above carry it all.
            "thinking_callback": None,
            "tool_progress_callback": None,
            "step_callback": None,
        }

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
        callbacks = self._callbacks(hooks, calls, streamed)
        self._install(callbacks)
        before_id, before = self.internal_session_id, self._counters()
        result: Mapping[str, Any]
        with contextlib.ExitStack() as stack:
            try:
                self._bind(stack, hooks, calls, cwd)
                with self._lock:
                    self._agent.clear_interrupt()
                    self._running = True
                result = self._agent.run_conversation(
                    user_message=content, conversation_history=history, task_id=self._task_id
                )
            except Exception as exc:
                logger.exception("Hermes turn failed")
                result = {"failed": True, "error": f"{type(exc).__name__}: {exc}"}
            finally:
                with self._lock:
                    self._running = False
                    self._agent.clear_interrupt()
                self._install(dict.fromkeys(callbacks))
        for call_id, name, args in calls.remaining():
            end = ToolEnd(call_id, name, args, "The turn ended before this call finished.", True)
            hooks.on_tool_end(end)
        if self.internal_session_id != before_id:
            hooks.on_internal_session_id(self.internal_session_id, "compression")
        usage = usage_delta(before, self._counters())
        return turn_result(result, content, history, streamed=streamed.is_set(), usage=usage)


def turn_result(
    result: Mapping[str, Any],
    content: str | list[dict[str, Any]],
    history: list[Message],
    *,
    streamed: bool,
    usage: TurnUsage,
) -> TurnResult:
    """The seam's result of a Hermes turn (``run_conversation``'s dict)."""
    stop = stop_kind(result)
    final = result.get("final_response")
    final = final if isinstance(final, str) and final else None
    messages = result.get("messages")
    if not isinstance(messages, list):  # the turn failed early: keep the prompt
        messages = [*history, {"role": "user", "content": content}]
    error = None
    if stop == "error":
        error = str(result.get("error") or final or result.get("failure_reason") or "failed")
    steer = result.get("pending_steer")
    return TurnResult(
        messages=list(messages),
        # An interrupted turn's "final response" is Hermes' interrupt notice.
        final_text=final if stop not in ("cancelled", "error") else None,
        stop=stop,
        usage=usage,
        error=error,
        pending_steer=steer if isinstance(steer, str) and steer else None,
        streamed=streamed and not result.get("response_transformed"),
    )


class HermesAgentFactory:
    """Builds a :class:`HermesAgent` per session from Hermes' own configuration
    (``$HERMES_HOME/config.yaml`` and ``.env``), as ``hermes-acp`` does."""

    name = "Hermes AIAgent"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runtime: dict[str, Any] | None = None
        self._problem: str | None = None
        self._models: list[str] | None = None
        self._mcp_discovered = False

    @staticmethod
    def _model_config() -> tuple[str, str | None]:
        """(default model, configured provider) from Hermes' config.yaml."""
        config = importlib.import_module("hermes_cli.config").load_config()
        section = config.get("model")
        if isinstance(section, dict):
            provider = section.get("provider")
            return str(section.get("default") or ""), str(provider) if provider else None
        return (section.strip() if isinstance(section, str) else ""), None

    def _resolve(self) -> dict[str, Any] | None:
        with self._lock:
            if self._runtime is None:
                try:
                    _, provider = self._model_config()
                    resolve = importlib.import_module("hermes_cli.runtime_provider")
                    runtime = dict(resolve.resolve_runtime_provider(requested=provider))
                except ImportError as exc:
                    self._problem = f"hermes-agent is not importable here ({exc})"
                    return None
                except Exception as exc:
                    self._problem = f"Hermes has no usable provider ({exc}); {_SETUP_HINT}"
                    return None
                key = runtime.get("api_key")
                if not (callable(key) or (isinstance(key, str) and key.strip())):
                    name = runtime.get("provider")
                    self._problem = f"Hermes provider {name!r} has no API key; {_SETUP_HINT}"
                    return None
                self._runtime, self._problem = runtime, None
            return self._runtime

    def configured(self) -> bool:
        return self._resolve() is not None

    @property
    def problem(self) -> str | None:
        return self._problem

    @property
    def provider(self) -> str:
        runtime = self._resolve()
        return str(runtime.get("provider") or "hermes") if runtime else "none"

    def reset(self) -> None:
        with self._lock:
            self._runtime, self._problem, self._models = None, None, None

    def available_models(self) -> list[str]:
        """The configured model, plus what a ``custom`` endpoint lists (cached)."""
        runtime = self._resolve()
        if runtime is None:
            return []
        with self._lock:
            if self._models is None:
                models = [m for m in [self._model_config()[0]] if m]
                key, base_url = runtime.get("api_key"), runtime.get("base_url")
                if runtime.get("provider") == "custom" and isinstance(base_url, str):
                    from acpwire.agent.llm import list_models

                    with contextlib.suppress(Exception):
                        listed = list_models(base_url, key if isinstance(key, str) else None)
                        models += [m for m in listed if m not in models]
                self._models = models
            return list(self._models)

    def _mcp_toolsets(self) -> list[str]:
        """``mcp-<name>`` toolsets of config.yaml's MCP servers, discovered once."""
        config = importlib.import_module("hermes_cli.config").load_config()
        servers = config.get("mcp_servers") or {}
        names = [
            str(name)
            for name, cfg in servers.items()
            if not isinstance(cfg, dict) or cfg.get("enabled", True) is not False
        ]
        if names and not self._mcp_discovered:
            self._mcp_discovered = True
            try:
                importlib.import_module("tools.mcp_tool").discover_mcp_tools()
            except Exception as exc:
                logger.warning("Hermes MCP discovery failed: %s", exc)
        return [f"mcp-{name}" for name in names]

    def create(
        self, session_id: str, cwd: str, model: str | None, internal_id: str | None = None
    ) -> HermesAgent:
        runtime = self._resolve()
        if runtime is None:
            raise ConfigError(self._problem or "Hermes has no provider configured")
        default_model, _ = self._model_config()
        kwargs: dict[str, Any] = {
            "platform": "acp",
            "quiet_mode": True,
            "enabled_toolsets": [TOOLSET, *self._mcp_toolsets()],
            # Hermes keys its state by this id: a restored session resumes its internal one.
            "session_id": internal_id or session_id,
            "model": model or default_model,
            "args": list(runtime.get("args") or []),
            **{
                k: runtime.get(k)
                for k in ("provider", "api_mode", "base_url", "api_key", "command")
            },
        }
        try:
            agent = importlib.import_module("run_agent").AIAgent(**kwargs)
        except (ValueError, RuntimeError) as exc:  # e.g. a context window under 64K tokens
            raise ConfigError(f"Hermes cannot start a session: {exc}") from exc
        return HermesAgent(agent, task_id=session_id, cwd=cwd)
