"""The agent's todo list as an ACP ``plan`` update.

ACP plan entries know ``pending``, ``in_progress`` and ``completed`` only, so a
cancelled todo is shown as completed with a ``"[cancelled] "`` prefix (as Hermes
does). Every entry gets priority ``medium``. An empty list is still sent: it
clears the plan in the client.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Final, Literal

from acp_v1 import models as m
from acpwire.agent.seam import PlanItem
from acpwire.render.text import parse_json, str_arg

log = logging.getLogger(__name__)

CANCELLED_PREFIX: Final = "[cancelled] "
PRIORITY: Final = "medium"

EntryStatus = Literal["pending", "in_progress", "completed"]


_STATUS: Final[Mapping[str, EntryStatus]] = {
    "pending": "pending",
    "in_progress": "in_progress",
    "completed": "completed",
    "cancelled": "completed",
}


def _entry(content: str, status: str) -> m.PlanEntry:
    mapped = _STATUS.get(status)
    if mapped is None:
        log.warning("todo status %r is unknown; showing the entry as pending", status)
        mapped = "pending"
    if status == "cancelled":
        content = CANCELLED_PREFIX + content
    return m.PlanEntry(content=content, status=mapped, priority=PRIORITY)


def plan_update(items: Sequence[PlanItem]) -> m.SessionUpdatePlan:
    """The ``plan`` update showing ``items``; an empty list clears the plan."""
    return m.SessionUpdatePlan(entries=[_entry(item["content"], item["status"]) for item in items])


def _item_entry(position: int, item: object) -> m.PlanEntry | None:
    if not isinstance(item, Mapping):
        log.warning("todo entry %d is not an object (%r); not shown in the plan", position, item)
        return None
    values = dict(item)
    content = str_arg(values, "content") or str_arg(values, "id")
    if not content:
        log.warning("todo entry %d has neither content nor id; not shown in the plan", position)
        return None
    return _entry(content, str_arg(values, "status") or "pending")


def plan_from_todo_result(text: str) -> m.SessionUpdatePlan | None:
    """The plan shown by a ``todo`` tool result, or None when it holds no todo list.

    The result is JSON (``{"todos": [...], ...}``), possibly followed by a human hint,
    which is ignored.
    """
    value = parse_json(text)
    todos = value.get("todos") if isinstance(value, dict) else value
    if not isinstance(todos, list):
        return None
    entries = [entry for i, item in enumerate(todos) if (entry := _item_entry(i, item)) is not None]
    return m.SessionUpdatePlan(entries=entries)
