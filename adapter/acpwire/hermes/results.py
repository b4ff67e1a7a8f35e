"""Hermes' values in the seam's terms: tool arguments and results, todo plans, per-turn
usage, stop reasons and the :class:`~acpwire.agent.seam.TurnResult` of a turn.

Pure functions over plain data; none of them needs Hermes installed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from acpwire.agent.seam import Message, PlanItem, StopKind, TurnResult, TurnUsage

COUNTERS = ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cache_read_tokens")
_STATUSES = ("pending", "in_progress", "completed", "cancelled")


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


def result_text(result: object) -> str:
    """A tool result as the text the seam carries (non-strings as JSON)."""
    if isinstance(result, str):
        return result
    return "" if result is None else json.dumps(result, default=str)


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
        messages=without_bookkeeping(messages),
        # An interrupted turn's "final response" is Hermes' interrupt notice.
        final_text=final if stop not in ("cancelled", "error") else None,
        stop=stop,
        usage=usage,
        error=error,
        pending_steer=steer if isinstance(steer, str) and steer else None,
        streamed=streamed and not result.get("response_transformed"),
    )


_BOOKKEEPING = "_db_persisted"
"""The mark Hermes stamps on each message it has written to its database."""


def without_bookkeeping(messages: list[Message]) -> list[Message]:
    """``messages`` without Hermes' in-process marks, as acpwire stores them (the mark
    would make every saved message differ from its stored row)."""
    return [
        {k: v for k, v in m.items() if k != _BOOKKEEPING} if _BOOKKEEPING in m else m
        for m in messages
    ]
