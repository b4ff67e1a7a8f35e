"""Todo lists as ACP plans."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import pytest
from pydantic import BaseModel

from acpwire.agent.seam import PlanItem
from acpwire.render import plan_from_todo_result, plan_update

RoundTrip = Callable[[BaseModel], dict[str, object]]


def test_plan_maps_statuses_and_prefixes_cancelled(roundtrip: RoundTrip) -> None:
    items = [
        PlanItem(id="1", content="read code", status="completed"),
        PlanItem(id="2", content="fix bug", status="in_progress"),
        PlanItem(id="3", content="write tests", status="pending"),
        PlanItem(id="4", content="obsolete step", status="cancelled"),
    ]
    data = roundtrip(plan_update(items))
    assert data == {
        "sessionUpdate": "plan",
        "entries": [
            {"content": "read code", "priority": "medium", "status": "completed"},
            {"content": "fix bug", "priority": "medium", "status": "in_progress"},
            {"content": "write tests", "priority": "medium", "status": "pending"},
            {"content": "[cancelled] obsolete step", "priority": "medium", "status": "completed"},
        ],
    }


def test_empty_list_clears_the_plan(roundtrip: RoundTrip) -> None:
    assert roundtrip(plan_update([])) == {"sessionUpdate": "plan", "entries": []}


def test_todo_result_with_a_trailing_hint() -> None:
    todos = [{"id": "a", "content": "one", "status": "cancelled"}]
    text = json.dumps({"todos": todos, "summary": {"total": 1}}) + "\n\n[Hint: mark items done]"
    plan = plan_from_todo_result(text)
    assert plan is not None
    assert [(e.content, e.status, e.priority) for e in plan.entries] == [
        ("[cancelled] one", "completed", "medium")
    ]


def test_todo_result_with_no_items_clears_the_plan() -> None:
    plan = plan_from_todo_result('{"todos": [], "summary": {"total": 0}}')
    assert plan is not None and plan.entries == []


@pytest.mark.parametrize(
    "text", ["", "not json", '{"error": "bad todo"}', '{"todos": "x"}', "42", '{"todos": 3}']
)
def test_results_without_a_todo_list_give_no_plan(text: str) -> None:
    assert plan_from_todo_result(text) is None


def test_bad_entries_are_logged_not_silently_dropped(caplog: pytest.LogCaptureFixture) -> None:
    text = json.dumps(
        {
            "todos": [
                {"id": "1", "content": "ok", "status": "weird"},
                "junk",
                {"status": "pending"},
                {"id": "7"},
            ]
        }
    )
    with caplog.at_level(logging.WARNING, logger="acpwire.render.plan"):
        plan = plan_from_todo_result(text)
    assert plan is not None
    assert [(e.content, e.status) for e in plan.entries] == [("ok", "pending"), ("7", "pending")]
    messages = " | ".join(record.getMessage() for record in caplog.records)
    assert "'weird' is unknown" in messages
    assert "todo entry 1 is not an object" in messages
    assert "todo entry 2 has neither content nor id" in messages
