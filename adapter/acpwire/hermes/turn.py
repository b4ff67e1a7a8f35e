"""One Hermes turn's plumbing: tool-call ids, the callbacks ``AIAgent`` calls, and the
per-turn bindings: the boundary its tool calls go through, Hermes' tool cwd and its
approval hooks.

Hermes calls its callback attributes on its own threads; here they become the seam's
:class:`~acpwire.agent.seam.TurnHooks` calls. Approvals are answered "once" to Hermes:
remembering them is acpwire's job, not Hermes' allowlist.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from acpwire.agent.seam import CommandProposal, ToolEnd, ToolStart, TurnHooks
from acpwire.hermes.boundary import BOUNDARY, TurnBinding
from acpwire.hermes.modules import hermes_module
from acpwire.hermes.results import plan_items, result_text, tool_args

Callbacks = dict[str, Callable[..., None] | None]


class CallIds:
    """Tool-call ids of one turn: Hermes' ids, made unique over the session.

    ``used`` is shared by the session's turns: a provider id seen before (scripted
    models reuse ``call_0``) gets a fresh ``tc-`` id so a client never merges two calls.
    """

    def __init__(self, used: set[str]) -> None:
        self._used = used
        self._lock = threading.Lock()
        self._open: dict[str, tuple[str, str, dict[str, Any], float]] = {}

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

    def editor_id(self, hermes_id: str) -> str | None:
        """The id the editor knows for an open call (None: not started or ended)."""
        with self._lock:
            found = self._open.get(hermes_id) if hermes_id else None
        return found[0] if found is not None else None

    def remaining(self) -> list[tuple[str, str, dict[str, Any]]]:
        with self._lock:
            left = [(cid, name, args) for cid, name, args, _ in self._open.values()]
            self._open.clear()
        return left


def turn_callbacks(
    hooks: TurnHooks, calls: CallIds, streamed: threading.Event, failed: dict[str, bool]
) -> Callbacks:
    """``AIAgent``'s callback attributes for one turn, by attribute name (None unsets).
    ``failed``: Hermes call id -> whether the boundary failed the call (its status)."""

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
        text = result_text(result)
        failure = failed.pop(hermes_id or "", False)
        hooks.on_tool_end(ToolEnd(call_id, name, start_args, text, failure, seconds))
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


def bind_turn(stack: contextlib.ExitStack, binding: TurnBinding, task_id: str) -> None:
    """The turn's boundary and Hermes' per-turn plumbing, undone when ``stack`` closes.

    Ties every tool call of ``task_id`` (and of its delegated children) to ``binding``
    (:mod:`acpwire.hermes.boundary`: acpwire's tools and policy run them), binds the
    session's tool cwd and system-prompt directory, and, as a second line should any
    Hermes path still reach its own terminal code, its thread-local approval callback
    (asking the editor) with the interactive-context flag (without it Hermes
    auto-approves dangerous commands). Each Hermes module missing here is skipped.
    """
    hooks, cwd = binding.hooks, binding.cwd

    def approve(command: str, description: str, **kw: Any) -> str:
        # ``smart_denied``: Hermes' smart approval refused the command; the user may
        # override that for this run only (Hermes' own rule), never for a session.
        one_time = bool(kw.get("smart_denied"))
        allow_permanent = bool(kw.get("allow_permanent", True)) and not one_time
        proposal = CommandProposal(command, description, allow_permanent, one_time)
        answer = hooks.approve_command(proposal)
        return "deny" if answer == "deny" else "once"

    stack.enter_context(BOUNDARY.bind(task_id, binding))
    terminal = hermes_module("tools.terminal_tool")
    if terminal is not None:
        terminal.register_task_env_overrides(task_id, {"cwd": cwd})
        stack.callback(terminal.set_approval_callback, terminal._get_approval_callback())
        terminal.set_approval_callback(approve)
    approval = hermes_module("tools.approval")
    if approval is not None:
        stack.callback(
            approval.reset_hermes_interactive_context,
            approval.set_hermes_interactive_context(True),
        )
    session = hermes_module("gateway.session_context")
    if session is not None:
        # ``cwd`` also makes Hermes' system prompt name the session's directory. No
        # ``platform``: with one, Hermes' approval takes its gateway path and parks
        # dangerous commands as "pending" instead of asking the callback.
        tokens = session.set_session_vars(session_key=task_id, cwd=cwd)
        stack.callback(session.clear_session_vars, tokens)
