"""Running the tool calls of one model reply, with the start/end guarantee of the seam.

Every call gets exactly one ``on_tool_start`` and one ``on_tool_end`` with the model's
call id, whatever happens: malformed arguments, unknown tools, denials, exceptions and
interrupts all end as failed results, never as a crash or a missing end event.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable
from typing import Any

from acpwire.agent.embedded.stream import ToolCall
from acpwire.agent.embedded.tools import (
    Tool,
    ToolArgError,
    ToolContext,
    ToolOutcome,
    ToolRegistry,
    check_arguments,
    failure,
)
from acpwire.agent.seam import EditorRefused, Message, ToolEnd, ToolStart

log = logging.getLogger(__name__)

INTERRUPTED = "interrupted"


def parse_arguments(call: ToolCall) -> tuple[dict[str, Any], str | None]:
    """The call's arguments as a dict, or ``({"raw_arguments": ...}, error message)``."""
    text = call.arguments.strip()
    if not text:
        return {}, None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return {"raw_arguments": call.arguments[:2000]}, (
            f"invalid JSON arguments for {call.name}: {exc.msg} at character {exc.pos};"
            " send the arguments as one JSON object"
        )
    if not isinstance(value, dict):
        return {"raw_arguments": call.arguments[:2000]}, (
            f"the arguments for {call.name} must be a JSON object, got {type(value).__name__}"
        )
    return value, None


def unique_ids(calls: list[ToolCall], seen: set[str]) -> list[ToolCall]:
    """``calls`` with ids made unique against ``seen`` (some local servers reuse ids)."""
    result: list[ToolCall] = []
    for call in calls:
        call_id = call.id
        suffix = 1
        while call_id in seen:
            suffix += 1
            call_id = f"{call.id}_{suffix}"
        seen.add(call_id)
        result.append(ToolCall(call_id, call.name, call.arguments))
    return result


def history_call_ids(messages: Iterable[Message]) -> set[str]:
    return {
        str(call.get("id"))
        for message in messages
        if message.get("role") == "assistant"
        for call in message.get("tool_calls") or []
        if isinstance(call, dict)
    }


def assistant_message(text: str, reasoning: str, calls: list[ToolCall]) -> Message:
    """The history entry of a model reply.

    Malformed arguments are stored as ``{}``: several servers re-parse the arguments of
    earlier calls in their chat templates and would reject the next request.
    """
    message: Message = {"role": "assistant", "content": text or (None if calls else "")}
    if reasoning:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": call.arguments
                    if parse_arguments(call)[1] is None and call.arguments.strip()
                    else "{}",
                },
            }
            for call in calls
        ]
    return message


def run_call(
    call: ToolCall, ctx: ToolContext, registry: ToolRegistry, skip_reason: str | None
) -> ToolOutcome:
    """Run one call between its start and end events; ``skip_reason`` fails it unrun."""
    args, problem = parse_arguments(call)
    started = time.monotonic()
    ctx.hooks.on_tool_start(ToolStart(call_id=call.id, name=call.name, args=args))
    outcome = failure(INTERRUPTED)
    try:
        outcome = _execute(call, args, problem, ctx, registry, skip_reason)
    finally:
        ctx.hooks.on_tool_end(
            ToolEnd(
                call_id=call.id,
                name=call.name,
                args=args,
                result=outcome.result_text,
                failed=outcome.failed,
                duration_s=time.monotonic() - started,
            )
        )
    return outcome


def _execute(
    call: ToolCall,
    args: dict[str, Any],
    problem: str | None,
    ctx: ToolContext,
    registry: ToolRegistry,
    skip_reason: str | None,
) -> ToolOutcome:
    if skip_reason is not None:
        return failure(skip_reason)
    if problem is not None:
        return failure(problem)
    if ctx.cancel.cancelled:
        return failure(INTERRUPTED)
    tool = registry.get(call.name)
    if tool is None:
        return failure(f"unknown tool {call.name!r}; available: {', '.join(registry.names())}")
    return run_tool(tool, args, ctx)


def run_tool(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
    """``tool`` run on ``args``: arguments checked against its schema, and every failure
    (bad arguments, the editor's refusal, an exception) a failed outcome, never a raise."""
    problem = check_arguments(tool, args)
    if problem is not None:
        return failure(problem)
    try:
        outcome: ToolOutcome = tool.run(args, ctx)
    except ToolArgError as exc:
        return failure(str(exc))
    except EditorRefused as exc:  # final: the tool did nothing locally instead
        return failure(str(exc), refused_by_editor=True)
    except Exception as exc:
        log.exception("tool %s failed", tool.name)
        return failure(f"Error executing tool '{tool.name}': {type(exc).__name__}: {exc}")
    return outcome


def answer_dangling_calls(messages: list[Message], reason: str) -> None:
    """Add failed results for tool calls left unanswered, so the history stays valid."""
    answered = {
        message.get("tool_call_id") for message in messages if message.get("role") == "tool"
    }
    for message in list(messages):
        for call in message.get("tool_calls") or []:
            if call.get("id") not in answered:
                messages.append({"role": "tool", "tool_call_id": call.get("id"), "content": reason})
