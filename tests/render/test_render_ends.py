"""The terminal ``tool_call_update`` of a call: status, content per tool, caps."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from acp_v1.models import (
    ContentBlockText,
    SessionUpdateToolCallUpdate,
    ToolCallContentContent,
    ToolCallContentDiff,
    ToolCallContentTerminal,
)
from acpwire.agent.seam import EditProposal, ToolEnd
from acpwire.render import end_update, terminal_content

RoundTrip = Callable[[BaseModel], dict[str, object]]
CWD = "/w/proj"


def _end(
    name: str, args: Any, result: str, failed: bool = False, **kw: Any
) -> SessionUpdateToolCallUpdate:
    end = ToolEnd(call_id="c1", name=name, args=args, result=result, failed=failed)
    return end_update(end, cwd=CWD, **kw)


def _text(update: SessionUpdateToolCallUpdate) -> str:
    (item,) = update.content or []
    assert isinstance(item, ToolCallContentContent)
    assert isinstance(item.content, ContentBlockText)
    return item.content.text


@pytest.mark.parametrize(
    ("result", "failed_flag", "status"),
    [
        ("all good", False, "completed"),
        ("an error happened somewhere in the logs", False, "completed"),
        ("all good", True, "failed"),
        ("Error executing tool 'x': boom", False, "failed"),
        ('{"success": false}', False, "failed"),
        ('{"ok": false, "message": "nope"}', False, "failed"),
        ('{"success": true}', False, "completed"),
        ('{"exit_code": 2, "output": ""}', False, "failed"),
        ('{"exit_code": 0, "output": "x"}', False, "completed"),
        ('{"returncode": 1}', False, "failed"),
        ('{"exit_code": true}', False, "completed"),
        ('{"error": "file not found"}', False, "failed"),
        ('{"error": "partial", "content": "some text"}', False, "completed"),
        ('{"error": null, "data": 1}', False, "completed"),
        ('{"error": ""}', False, "completed"),
        ('{"error": "x"}\n\n[Hint: retry]', False, "failed"),
        ("[1, 2, 3]", False, "completed"),
        ("", False, "completed"),
    ],
)
def test_failure_detection(
    result: str, failed_flag: bool, status: str, roundtrip: RoundTrip
) -> None:
    update = _end("plugin_tool", {}, result, failed_flag)
    assert update.status == status
    assert update.tool_call_id == "c1"
    data = roundtrip(update)
    assert data["status"] == status


def test_generic_result_is_text_capped_at_5000_with_raw_output(roundtrip: RoundTrip) -> None:
    result = "r" * 8000
    update = _end("plugin_tool", {"a": 1}, result)
    text = _text(update)
    assert text == "r" * 4900 + "\n... (8000 chars total, truncated)"
    assert update.raw_output == result
    assert roundtrip(update)["rawOutput"] == result


def test_generic_json_result_raw_output_is_the_value() -> None:
    update = _end("srv__tool", {}, '{"items": [1, 2]}')
    assert update.raw_output == {"items": [1, 2]}
    assert _text(update) == '{"items": [1, 2]}'


def test_generic_raw_output_is_capped() -> None:
    update = _end("plugin_tool", {}, "q" * 60_000)
    assert isinstance(update.raw_output, str)
    assert len(update.raw_output) <= 50_000


def test_empty_result_says_no_output() -> None:
    assert _text(_end("plugin_tool", {}, "")) == "(no output)"


def test_polished_tools_have_no_raw_output(roundtrip: RoundTrip) -> None:
    update = _end("terminal", {"command": "ls"}, '{"output": "a", "exit_code": 0}')
    assert update.raw_output is None
    assert "rawOutput" not in roundtrip(update)


def test_terminal_output_is_fenced_with_exit_code() -> None:
    update = _end("terminal", {"command": "ls"}, json.dumps({"output": "a\nb\n", "exit_code": 0}))
    assert update.status == "completed"
    assert update.kind == "execute"
    assert _text(update) == "```\na\nb\n```\n\nExit code: 0"


def test_terminal_output_is_capped_at_5000() -> None:
    output = "o" * 20_000
    update = _end("terminal", {"command": "yes"}, json.dumps({"output": output, "exit_code": 3}))
    assert update.status == "failed"
    text = _text(update)
    fenced, exit_line = text.rsplit("\n\n", 1)
    assert exit_line == "Exit code: 3"
    assert len(fenced) <= 5000
    assert "(20000 chars total, truncated)" in fenced
    assert fenced.endswith("\n```")


def test_terminal_blocked_command_shows_error_and_reason() -> None:
    result = json.dumps(
        {
            "error": "BLOCKED: the user denied this command.",
            "command": "rm -rf /",
            "reason": "deletes",
        }
    )
    update = _end("terminal", {"command": "rm -rf /"}, result, failed=True)
    assert update.status == "failed"
    assert _text(update) == "Error: BLOCKED: the user denied this command.\n\nReason: deletes"


def test_terminal_plain_text_failure_is_not_fenced() -> None:
    update = _end("terminal", {}, "Error executing tool 'terminal': boom")
    assert update.status == "failed"
    assert _text(update) == "Error executing tool 'terminal': boom"


def test_execute_code_renders_like_a_shell() -> None:
    result = json.dumps({"stdout": "42\n", "stderr": "warn\n", "exit_code": 0})
    assert (
        _text(_end("execute_code", {}, result))
        == "```\n42\n```\n\nstderr:\n\n```\nwarn\n```\n\nExit code: 0"
    )


def test_read_file_is_fenced_with_an_adaptive_fence() -> None:
    body = "     1|x = '```'\n     2|y = 2"
    update = _end("read_file", {"path": "a.py", "offset": 1, "limit": 2}, body)
    assert _text(update) == f"Read a.py (from line 1, limit 2)\n\n````\n{body}\n````"
    assert update.raw_output is None


def test_read_file_is_capped_at_5000() -> None:
    body = "\n".join(f"{i:>6}|" + "c" * 80 for i in range(1, 500))
    text = _text(_end("read_file", {"path": "big.py"}, body))
    assert len(text) <= 5000
    assert text.startswith("Read big.py\n\n```\n")
    assert text.endswith(f"({len(body)} chars total, truncated)\n```")


def test_read_file_json_shape_and_failure() -> None:
    ok = _end("read_file", {"path": "a"}, json.dumps({"content": "1|x", "total_lines": 1}))
    assert _text(ok) == "Read a - 1 lines in total\n\n```\n1|x\n```"
    bad = _end("read_file", {"path": "a"}, json.dumps({"error": "file not found: /w/proj/a"}))
    assert bad.status == "failed"
    assert _text(bad) == "Read failed: file not found: /w/proj/a"


def test_search_matches_show_at_most_twelve() -> None:
    matches = [{"path": f"f{i}.py", "line": i, "text": "x" * 400} for i in range(30)]
    result = json.dumps({"root": "/w", "matches": matches, "count": 30, "truncated": True})
    text = _text(_end("search_files", {"pattern": "x"}, result))
    lines = text.splitlines()
    assert lines[0] == "Found 30 matches; showing 12."
    assert "- f11.py:11" in lines and "- f12.py:12" not in lines
    assert lines[3] == "  " + "x" * 297 + "..."
    assert lines[-1] == "Results truncated: narrow the pattern or the path."
    assert len(text) <= 7000


def test_search_files_show_at_most_twenty() -> None:
    files = [f"dir/file_{i}.py" for i in range(25)]
    text = _text(_end("search_files", {}, json.dumps({"files": files, "count": 25})))
    assert text.splitlines()[0] == "Found 25 files; showing 20."
    assert "- dir/file_19.py" in text and "file_20" not in text


def test_search_output_is_capped_at_7000() -> None:
    files = ["p" * 299 for _ in range(20)]
    matches = [{"path": "p" * 290, "line": 1, "text": "t" * 300} for _ in range(12)]
    for payload in ({"files": files}, {"matches": matches}):
        text = _text(_end("search_files", {}, json.dumps(payload)))
        assert len(text) <= 7000


def test_search_failure_shows_the_error() -> None:
    update = _end("search_files", {}, json.dumps({"error": "path not found: /x"}), failed=True)
    assert _text(update) == "search_files failed: path not found: /x"


def test_todo_result_lists_the_items() -> None:
    todos = [
        {"id": "1", "content": "read", "status": "completed"},
        {"id": "2", "content": "fix", "status": "in_progress"},
    ]
    text = _text(_end("todo", {}, json.dumps({"todos": todos, "summary": {"total": 2}})))
    assert text == (
        "Todo list: 2 items (1 completed, 1 in progress)\n- [completed] read\n- [in_progress] fix"
    )


def test_write_result_with_proposal_is_the_diff(roundtrip: RoundTrip) -> None:
    proposal = EditProposal(path="/w/proj/a.txt", old_text="old\n", new_text="new\n")
    update = _end(
        "write_file", {"path": "a.txt"}, '{"path": "/w/proj/a.txt"}', proposals=[proposal]
    )
    (diff,) = update.content or []
    assert isinstance(diff, ToolCallContentDiff)
    assert (diff.path, diff.old_text, diff.new_text) == ("/w/proj/a.txt", "old\n", "new\n")
    assert [loc.path for loc in update.locations or []] == ["/w/proj/a.txt"]
    roundtrip(update)


def test_multi_file_patch_result_gives_one_diff_per_file() -> None:
    proposals = [
        EditProposal(path="/w/proj/a.py", old_text="a\n", new_text="A\n"),
        EditProposal(path="/w/proj/b.py", old_text=None, new_text="B\n"),
    ]
    result = json.dumps({"files": [{"path": "/w/proj/a.py", "action": "updated"}]})
    update = _end("patch", {"mode": "patch", "patch": "..."}, result, proposals=proposals)
    assert update.status == "completed"
    paths = [d.path for d in update.content or [] if isinstance(d, ToolCallContentDiff)]
    assert paths == ["/w/proj/a.py", "/w/proj/b.py"]
    assert len(update.content or []) == 2


def test_created_file_without_proposal_is_a_new_file_diff() -> None:
    result = json.dumps({"path": "/w/proj/n.txt", "bytes_written": 3, "created": True})
    update = _end("write_file", {"path": "n.txt", "content": "hi\n"}, result)
    (diff,) = update.content or []
    assert isinstance(diff, ToolCallContentDiff)
    assert (diff.path, diff.old_text, diff.new_text) == ("/w/proj/n.txt", None, "hi\n")


@pytest.mark.parametrize(
    ("name", "args", "result", "text"),
    [
        ("write_file", {"path": "a"}, '{"path": "/w/a", "bytes_written": 5, "created": false}', "Wrote /w/a (5 bytes)."),
        ("write_file", {"path": "a"}, '{"path": "/w/a", "bytes_written": 0, "unchanged": true}', "/w/a is unchanged."),
        ("patch", {"path": "a"}, '{"path": "/w/a", "replacements": 2, "match": "exact"}', "Edited /w/a: 2 replacements."),
        ("patch", {"mode": "patch"}, '{"files": [{"path": "/w/a", "action": "added"}, {"path": "/w/b", "action": "deleted"}]}',
         "Patched 2 files:\n- /w/a: added\n- /w/b: deleted"),
        ("patch", {}, "done", "done"),
    ],
)  # fmt: skip
def test_edit_results_without_proposals_are_summaries(
    name: str, args: dict[str, Any], result: str, text: str
) -> None:
    assert _text(_end(name, args, result)) == text


def test_denied_edit_shows_the_error_not_the_diff() -> None:
    proposal = EditProposal(path="/w/proj/a", old_text="x", new_text="y")
    result = json.dumps({"error": "the user denied the edit"})
    update = _end("write_file", {"path": "a"}, result, failed=True, proposals=[proposal])
    assert update.status == "failed"
    assert _text(update) == "write_file failed: the user denied the edit"


def test_edit_failure_text_is_capped_at_3000() -> None:
    update = _end("patch", {}, "e" * 9000, failed=True)
    assert len(_text(update)) <= 3000


@pytest.mark.parametrize(
    ("name", "result", "expected"),
    [
        ("process", {"processes": [{"session_id": "p1", "status": "running", "command": "sleep 9"}]},
         "Processes: 1\n- p1: running - sleep 9"),
        ("delegate_task", {"results": [{"status": "completed", "summary": "done it",
                                        "tool_trace": [{"tool": "terminal"}]}]},
         "Delegation results: 1 task\n\nTask 1: completed\ndone it\nTools: terminal"),
        ("session_search", {"results": [{"title": "Auth", "session_id": "s1", "summary": "fixed"}],
                            "query": "auth"},
         "Session search results for 'auth'\n- Auth (s1)\n  fixed"),
        ("web_search", {"data": {"web": [{"title": "ACP", "url": "https://acp", "description": "spec"}]}},
         "Web results: 1\n- ACP - https://acp\n  spec"),
        ("web_extract", {"results": [{"url": "https://a"}, {"url": "https://b", "error": "404"}]},
         "Extraction failed for 1 URL(s):\n- https://b\n  Error: 404"),
        ("web_extract", {"results": [{"url": "https://a", "content": "x"}]}, "Extracted 1 page."),
        ("browser_snapshot", {"title": "Home", "url": "https://h", "snapshot": "tree"},
         "Home\nhttps://h\n\ntree"),
        ("kanban_show", {"id": "k1", "status": "open", "items": [1, 2]},
         "kanban_show result\n- id: k1\n- status: open\n- items: 2 items\n  - 1\n  - 2"),
        ("cronjob", {"error": "no such job"}, "cronjob failed: no such job"),
    ],
)  # fmt: skip
def test_hermes_tool_results(name: str, result: dict[str, Any], expected: str) -> None:
    update = _end(name, {"action": "list"}, json.dumps(result))
    assert _text(update) == expected
    assert update.raw_output is None


def test_memory_result_preview_is_capped_at_300() -> None:
    update = _end(
        "memory", {"action": "add", "content": "m" * 1000}, '{"success": true, "target": "user"}'
    )
    text = _text(update)
    assert text.startswith("Memory add done (user)\nPreview: mmm")
    assert len(text.split("Preview: ", 1)[1]) <= 300


def test_structured_renderer_is_bounded() -> None:
    nested = {f"k{i}": {f"n{j}": list(range(20)) for j in range(20)} for i in range(30)}
    text = _text(_end("send_message", {}, json.dumps(nested)))
    assert len(text) <= 5000
    assert len(text.splitlines()) <= 41


@pytest.mark.parametrize("args", ["raw string args", None, 7, ["x"], '{"path": 3}'])
@pytest.mark.parametrize(
    "name",
    [
        "read_file",
        "write_file",
        "patch",
        "process",
        "memory",
        "skill_manage",
        "terminal",
        "todo",
        "x",
    ],
)
@pytest.mark.parametrize(
    "result", ["", "text", '{"error": "x"}', "[1]", '{"files": 3, "matches": "x"}']
)
def test_any_args_and_result_never_raise(
    name: str, args: Any, result: str, roundtrip: RoundTrip
) -> None:
    update = _end(name, args, result)
    assert update.status in ("completed", "failed")
    assert update.content
    roundtrip(update)


@pytest.mark.parametrize(
    ("result", "text", "status"),
    [(None, "(no output)", "completed"), ({"error": "x"}, '{"error": "x"}', "failed")],
)
def test_non_string_results_are_tolerated(result: Any, text: str, status: str) -> None:
    update = _end("x", {}, result)
    assert _text(update) == text
    assert update.status == status


def test_terminal_content_embeds_a_client_terminal() -> None:
    block = terminal_content("term-1")
    assert isinstance(block, ToolCallContentTerminal)
    update = SessionUpdateToolCallUpdate(tool_call_id="c1", content=[block])
    data = update.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert data["content"] == [{"type": "terminal", "terminalId": "term-1"}]
