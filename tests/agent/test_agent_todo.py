"""The todo tool: set, merge, read, validation, plan reports and restore from history."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acpwire.agent.embedded.tools.args import ToolArgError
from acpwire.agent.embedded.tools.todo import TodoTool, restore_todos
from acpwire.agent.seam import Message
from tests.agent.recording import RecordingHooks, make_ctx


def test_set_merge_and_read(tmp_path: Path) -> None:
    hooks = RecordingHooks()
    ctx = make_ctx(tmp_path, hooks)
    tool = TodoTool()
    first = tool.run(
        {
            "todos": [
                {"id": "1", "content": "write code", "status": "in_progress"},
                {"id": "2", "content": "test"},
            ]
        },
        ctx,
    )
    assert json.loads(first.result_text)["summary"] == {
        "total": 2,
        "pending": 1,
        "in_progress": 1,
        "completed": 0,
        "cancelled": 0,
    }
    tool.run(
        {
            "todos": [{"id": "1", "status": "completed"}, {"id": "3", "content": "ship"}],
            "merge": True,
        },
        ctx,
    )
    read = json.loads(tool.run({}, ctx).result_text)
    assert read["todos"] == [
        {"id": "1", "content": "write code", "status": "completed"},
        {"id": "2", "content": "test", "status": "pending"},
        {"id": "3", "content": "ship", "status": "pending"},
    ]
    # Two changes reported; the read reports nothing.
    assert len(hooks.plans) == 2
    assert hooks.plans[-1] == read["todos"]
    tool.run({"todos": [{"id": "9", "content": "only this"}]}, ctx)
    assert [item["id"] for item in ctx.state.todos] == ["9"]


@pytest.mark.parametrize(
    ("todos", "message"),
    [
        ("not a list", "must be an array"),
        ([{"content": "no id"}], "non-empty string 'id'"),
        ([{"id": "1"}], "non-empty 'content'"),
        ([{"id": "1", "content": "x", "status": "done"}], "status must be one of"),
    ],
)
def test_invalid_items(tmp_path: Path, todos: object, message: str) -> None:
    with pytest.raises(ToolArgError, match=message):
        TodoTool().run({"todos": todos}, make_ctx(tmp_path))


def test_restore_from_history() -> None:
    items = [{"id": "a", "content": "step", "status": "in_progress"}]
    history: list[Message] = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "t1", "type": "function", "function": {"name": "todo", "arguments": "{}"}},
                {
                    "id": "r1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": "{}"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "t1", "content": json.dumps({"todos": items})},
        {
            "role": "tool",
            "tool_call_id": "r1",
            "content": json.dumps({"todos": [{"id": "x", "content": "fake"}]}),
        },
    ]
    assert restore_todos(history) == items
    assert restore_todos([{"role": "user", "content": "hi"}]) == []
