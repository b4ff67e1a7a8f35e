"""The ``todo`` tool: the agent's task list for the session, shown to the user as a plan.

``todos`` replaces the list (or, with ``merge``, updates entries by id and appends new
ones); no ``todos`` just returns the list. Every change is reported through
``hooks.on_plan``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar, Literal, TypeGuard

from acpwire.agent.embedded.tools.args import ToolArgError, opt_bool
from acpwire.agent.embedded.tools.base import ToolContext, ToolOutcome
from acpwire.agent.seam import Message, PlanItem

Status = Literal["pending", "in_progress", "completed", "cancelled"]
STATUSES: tuple[Status, ...] = ("pending", "in_progress", "completed", "cancelled")


def _is_status(value: object) -> TypeGuard[Status]:
    return value in STATUSES


class TodoTool:
    name = "todo"
    description = (
        "Keep a task list for multi-step work: set it, update items by id with merge, or read it."
    )
    parameters: ClassVar[Mapping[str, Any]] = {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "description": "Todo items. Omit to read the current list.",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "content": {"type": "string"},
                        "status": {"type": "string", "enum": list(STATUSES)},
                    },
                    "required": ["id"],
                },
            },
            "merge": {
                "type": "boolean",
                "default": False,
                "description": "Update by id instead of replacing.",
            },
        },
        "additionalProperties": False,
    }

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        raw = args.get("todos")
        if raw is not None:
            if not isinstance(raw, list):
                raise ToolArgError("argument 'todos' must be an array of {id, content, status}")
            merge = opt_bool(args, "merge", False)
            current = {item["id"]: item for item in ctx.state.todos} if merge else {}
            for position, entry in enumerate(raw):
                item = _parse_item(entry, position, current)
                current[item["id"]] = item
            ctx.state.todos[:] = list(current.values())
            ctx.hooks.on_plan([PlanItem(**item) for item in ctx.state.todos])
        return ToolOutcome(render(ctx.state.todos))


def _parse_item(entry: object, position: int, current: dict[str, PlanItem]) -> PlanItem:
    if not isinstance(entry, dict):
        raise ToolArgError(f"todos[{position}] must be an object")
    raw_id = entry.get("id")
    if isinstance(raw_id, int) and not isinstance(raw_id, bool):
        raw_id = str(raw_id)
    if not isinstance(raw_id, str) or not raw_id:
        raise ToolArgError(f"todos[{position}] needs a non-empty string 'id'")
    previous = current.get(raw_id)
    content = entry.get("content", previous["content"] if previous else None)
    status = entry.get("status", previous["status"] if previous else "pending")
    if not isinstance(content, str) or not content.strip():
        raise ToolArgError(f"todos[{position}] ({raw_id}) needs a non-empty 'content'")
    if not _is_status(status):
        raise ToolArgError(
            f"todos[{position}] ({raw_id}): status must be one of {', '.join(STATUSES)}"
        )
    return PlanItem(id=raw_id, content=content, status=status)


def render(todos: list[PlanItem]) -> str:
    counts = {status: sum(1 for item in todos if item["status"] == status) for status in STATUSES}
    return json.dumps(
        {"todos": todos, "summary": {"total": len(todos), **counts}}, ensure_ascii=False
    )


def restore_todos(history: list[Message]) -> list[PlanItem]:
    """The todo list as of the last successful ``todo`` call recorded in ``history``."""
    todo_ids = {
        call.get("id")
        for message in history
        if message.get("role") == "assistant"
        for call in message.get("tool_calls") or []
        if isinstance(call, dict) and (call.get("function") or {}).get("name") == "todo"
    }
    for message in reversed(history):
        if message.get("role") != "tool" or message.get("tool_call_id") not in todo_ids:
            continue
        try:
            parsed = json.loads(str(message.get("content")))
        except json.JSONDecodeError:
            continue
        items = parsed.get("todos") if isinstance(parsed, dict) else None
        if isinstance(items, list):
            try:
                return [_parse_item(item, index, {}) for index, item in enumerate(items)]
            except ToolArgError:
                continue
    return []
