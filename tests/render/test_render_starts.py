"""The ``tool_call`` announcing a call, per tool."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from acp_v1.models import (
    ContentBlockText,
    SessionUpdateToolCall,
    ToolCallContentContent,
    ToolCallContentDiff,
)
from acpwire.agent.seam import EditProposal, ToolStart
from acpwire.render import start_update

RoundTrip = Callable[[BaseModel], dict[str, object]]
CWD = "/w/proj"


def _start(name: str, args: Any, **kw: Any) -> SessionUpdateToolCall:
    return start_update(ToolStart(call_id="c1", name=name, args=args), cwd=CWD, **kw)


def _texts(update: SessionUpdateToolCall) -> list[str]:
    texts = []
    for item in update.content or []:
        assert isinstance(item, ToolCallContentContent)
        assert isinstance(item.content, ContentBlockText)
        texts.append(item.content.text)
    return texts


def test_terminal_start_shows_the_command(roundtrip: RoundTrip) -> None:
    update = _start("terminal", {"command": "pytest -q"})
    assert (update.tool_call_id, update.kind, update.status) == ("c1", "execute", "in_progress")
    assert update.title == "terminal: pytest -q"
    assert _texts(update) == ["$ pytest -q"]
    assert update.raw_input is None
    data = roundtrip(update)
    assert data["sessionUpdate"] == "tool_call"
    assert data["toolCallId"] == "c1"
    assert "rawInput" not in data


@pytest.mark.parametrize("name", ["read_file", "web_extract"])
def test_read_and_extract_starts_have_no_content(name: str, roundtrip: RoundTrip) -> None:
    update = _start(name, {"path": "a.py", "urls": ["https://x"]})
    assert update.content is None
    assert "content" not in roundtrip(update)


def test_read_file_start_has_its_location() -> None:
    update = _start("read_file", {"path": "a.py", "offset": 3})
    assert [(loc.path, loc.line) for loc in update.locations or []] == [("/w/proj/a.py", 3)]
    assert update.kind == "read"


def test_search_start_says_what_it_searches() -> None:
    update = _start("search_files", {"pattern": "TODO", "target": "content", "path": "src"})
    assert _texts(update) == ["Searching for 'TODO' (content) in src"]
    assert update.kind == "search"
    default = _start("search_files", {"pattern": "*.py", "target": "files", "file_glob": "t*"})
    assert _texts(default) == ["Searching for '*.py' (files) in . (files matching t*)"]


def test_todo_start_previews_at_most_eight_items() -> None:
    todos = [{"id": str(i), "content": f"step {i}", "status": "pending"} for i in range(11)]
    (text,) = _texts(_start("todo", {"todos": todos}))
    lines = text.splitlines()
    assert lines[0] == "Setting 11 todo items:"
    assert lines[1:9] == [f"- [pending] step {i}" for i in range(8)]
    assert lines[9] == "... and 3 more"
    assert len(lines) == 10
    assert _texts(_start("todo", {})) == ["Reading the todo list."]
    merged = _texts(_start("todo", {"todos": [{"id": "1", "status": "completed"}], "merge": True}))
    assert merged == ["Updating 1 todo item:\n- [completed] 1"]


def test_generic_tool_start_shows_json_args_and_raw_input(roundtrip: RoundTrip) -> None:
    args = {"query": "x", "limit": 3}
    update = _start("github__search", args)
    assert _texts(update) == ['{\n  "query": "x",\n  "limit": 3\n}']
    assert update.raw_input == args
    assert update.kind == "other"
    assert roundtrip(update)["rawInput"] == args


def test_generic_args_preview_is_capped_at_1200() -> None:
    update = _start("plugin_tool", {"blob": "z" * 5000})
    (text,) = _texts(update)
    assert len(text) <= 1200
    assert text.endswith("chars total, truncated)")
    assert update.raw_input == {"blob": "z" * 5000}


def test_polished_tool_start_has_no_raw_input() -> None:
    update = _start("session_search", {"query": "x"})
    assert update.raw_input is None
    assert _texts(update) == ['{\n  "query": "x"\n}']


def test_generic_tool_without_args_has_no_content() -> None:
    assert _start("plugin_tool", {}).content is None


def test_execute_code_start_is_a_fenced_preview() -> None:
    (text,) = _texts(_start("execute_code", {"code": "print('x' * 3)\n" * 200}))
    assert text.startswith("```python\nprint(")
    assert text.endswith("\n```")
    assert len(text) <= 1200


def test_delegate_start_lists_tasks() -> None:
    tasks = [{"goal": f"goal {i}"} for i in range(10)]
    (text,) = _texts(_start("delegate_task", {"tasks": tasks}))
    assert text.splitlines()[0] == "Delegating 10 tasks:"
    assert "- goal 7" in text and "goal 8" not in text and text.endswith("... and 2 more")


def test_memory_and_process_starts_are_capped_at_500() -> None:
    (memory,) = _texts(_start("memory", {"action": "add", "target": "user", "content": "m" * 900}))
    assert memory.startswith("add user\nmmm") and len(memory) <= 500
    (process,) = _texts(_start("process", {"action": "write", "data": "d" * 900}))
    assert len(process) <= 500


def test_write_start_without_preview_is_pending() -> None:
    update = _start("write_file", {"path": "notes.txt", "content": "hi"})
    assert update.status == "pending"
    assert update.kind == "edit"
    assert _texts(update) == ["Preparing write to notes.txt. Approval prompt shows the diff."]
    assert [loc.path for loc in update.locations or []] == ["/w/proj/notes.txt"]


def test_patch_start_without_preview_names_the_files() -> None:
    patch = "*** Begin Patch\n*** Update File: a.py\n*** Add File: b.py\n*** End Patch"
    update = _start("patch", {"mode": "patch", "patch": patch})
    assert update.status == "pending"
    assert _texts(update) == [
        "Preparing patch edit for a.py, b.py. Approval prompt shows the diff."
    ]


def test_multi_file_preview_gives_one_diff_per_file(roundtrip: RoundTrip) -> None:
    preview = [
        EditProposal(path="/w/proj/a.py", old_text="x = 1\n", new_text="x = 2\n"),
        EditProposal(path="b.py", old_text=None, new_text="new\n"),
        EditProposal(path="/w/proj/c.py", old_text="gone\n", new_text=""),
    ]
    update = _start("patch", {"mode": "patch", "patch": "..."}, edit_preview=preview)
    assert update.status == "in_progress"
    diffs = update.content or []
    assert all(isinstance(d, ToolCallContentDiff) for d in diffs)
    assert [
        (d.path, d.old_text, d.new_text) for d in diffs if isinstance(d, ToolCallContentDiff)
    ] == [
        ("/w/proj/a.py", "x = 1\n", "x = 2\n"),
        ("/w/proj/b.py", None, "new\n"),
        ("/w/proj/c.py", "gone\n", ""),
    ]
    assert [loc.path for loc in update.locations or []] == [
        "/w/proj/a.py",
        "/w/proj/b.py",
        "/w/proj/c.py",
    ]
    data = roundtrip(update)
    content = data["content"]
    assert isinstance(content, list)
    assert content[1] == {"type": "diff", "path": "/w/proj/b.py", "newText": "new\n"}


def test_empty_preview_means_no_changes() -> None:
    update = _start("write_file", {"path": "a"}, edit_preview=[])
    assert update.status == "in_progress"
    assert _texts(update) == ["No file changes."]


GARBAGE: list[Any] = [
    "not json at all",
    '{"unterminated": ',
    "[1, 2, 3]",
    None,
    42,
    ["a", {"b": 1}],
    {"path": 5, "command": ["x"], "todos": "nope", "tasks": 3, "code": None, "offset": "x"},
    {"pattern": {"nested": True}, "urls": "https://x", "mode": 7, "patch": 9},
    {"todos": [None, 3, {"status": {"x": 1}}]},
]
TOOLS = [
    "terminal", "read_file", "write_file", "patch", "search_files", "todo", "execute_code",
    "delegate_task", "process", "memory", "web_extract", "web_search", "skill_manage",
    "session_search", "browser_navigate", "cronjob", "mcp__tool", "anything",
]  # fmt: skip


@pytest.mark.parametrize("name", TOOLS)
@pytest.mark.parametrize("args", GARBAGE, ids=range(len(GARBAGE)))
def test_garbage_args_never_raise(name: str, args: Any, roundtrip: RoundTrip) -> None:
    update = _start(name, args)
    assert update.tool_call_id == "c1"
    assert update.title
    roundtrip(update)


@pytest.mark.parametrize(
    ("args", "diff"),
    [
        (
            {"action": "create", "name": "lint", "content": "# Lint\n"},
            ("skills/lint/SKILL.md", None, "# Lint\n"),
        ),
        (
            {"action": "patch", "name": "lint", "old_string": "a", "new_string": "b"},
            ("skills/lint/SKILL.md", "a", "b"),
        ),
        (
            {"action": "write_file", "name": "lint", "file_path": "ref.md", "file_content": "x"},
            ("skills/lint/ref.md", None, "x"),
        ),
    ],
)
def test_skill_manage_starts_in_progress_with_its_diff(
    args: dict[str, Any], diff: tuple[str, str | None, str], roundtrip: RoundTrip
) -> None:
    """Hermes changes its skills without asking: no "pending" start waiting for an
    approval that never comes; the start shows what will be written, as hermes-acp does."""
    update = _start("skill_manage", args)
    assert update.status == "in_progress"
    (shown,) = update.content or []
    assert isinstance(shown, ToolCallContentDiff)
    assert (shown.path, shown.old_text, shown.new_text) == diff
    roundtrip(update)


def test_skill_manage_removals_say_what_goes() -> None:
    update = _start("skill_manage", {"action": "delete", "name": "lint"})
    assert update.status == "in_progress"
    assert _texts(update) == ["Removing skill 'lint'."]
    update = _start("skill_manage", {"action": "remove_file", "name": "lint", "file_path": "a.md"})
    assert _texts(update) == ["Removing a.md from skill 'lint'."]


def test_gated_edits_still_start_pending() -> None:
    for name in ("write_file", "patch"):
        assert _start(name, {"path": "a.txt", "content": "x"}).status == "pending"
