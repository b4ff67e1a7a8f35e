"""read_file and write_file on real files, with approval and editor hooks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acpwire.agent.embedded.tools.files import ReadFileTool, WriteFileTool
from acpwire.agent.embedded.tools.search import SearchFilesTool
from tests.agent.recording import RecordingHooks, make_ctx


def test_read_file_numbers_lines_and_pages(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    outcome = ReadFileTool().run({"path": "f.txt", "offset": 3, "limit": 2}, make_ctx(tmp_path))
    assert not outcome.failed
    lines = outcome.result_text.splitlines()
    assert lines[0] == "     3|line 3"
    assert lines[1] == "     4|line 4"
    assert lines[2] == "... (10 lines in total; continue with offset=5)"
    whole = ReadFileTool().run({"path": str(tmp_path / "f.txt")}, make_ctx(tmp_path))
    assert whole.result_text.splitlines()[-1] == "    10|line 10"


def test_read_file_errors(tmp_path: Path) -> None:
    missing = ReadFileTool().run({"path": "nope.txt"}, make_ctx(tmp_path))
    assert missing.failed
    assert json.loads(missing.result_text)["error"] == f"file not found: {tmp_path / 'nope.txt'}"
    (tmp_path / "short.txt").write_text("one\n")
    past = ReadFileTool().run({"path": "short.txt", "offset": 5}, make_ctx(tmp_path))
    assert past.failed and "past the end" in past.result_text


def test_read_file_prefers_the_editor_buffer(tmp_path: Path) -> None:
    path = tmp_path / "open.py"
    path.write_text("on disk\n")
    hooks = RecordingHooks()
    hooks.editor_buffers[str(path)] = "unsaved edit\n"
    outcome = ReadFileTool().run({"path": "open.py"}, make_ctx(tmp_path, hooks))
    assert outcome.result_text == "     1|unsaved edit"


def test_write_file_approved_creates_the_file_in_the_turn_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the process cwd must not matter
    work = tmp_path / "work"
    work.mkdir()
    hooks = RecordingHooks()
    outcome = WriteFileTool().run(
        {"path": "sub/new.txt", "content": "hello\n"}, make_ctx(work, hooks, call_id="c7")
    )
    assert not outcome.failed
    assert (work / "sub" / "new.txt").read_text() == "hello\n"
    assert not (elsewhere / "sub").exists()
    [(call_id, proposals)] = hooks.edit_requests
    assert call_id == "c7"
    assert [(p.path, p.old_text, p.new_text) for p in proposals] == [
        (str(work / "sub" / "new.txt"), None, "hello\n")
    ]
    assert json.loads(outcome.result_text)["created"] is True


def test_write_file_denied_leaves_the_file_untouched(tmp_path: Path) -> None:
    target = tmp_path / "keep.txt"
    target.write_text("original\n")
    hooks = RecordingHooks(approve_edits=False)
    outcome = WriteFileTool().run(
        {"path": "keep.txt", "content": "changed\n"}, make_ctx(tmp_path, hooks)
    )
    assert outcome.failed
    assert json.loads(outcome.result_text) == {
        "error": "Edit denied by the user; file was not modified."
    }
    assert target.read_text() == "original\n"
    assert hooks.edit_requests[0][1][0].old_text == "original\n"


def test_write_file_goes_through_the_editor_when_it_can(tmp_path: Path) -> None:
    hooks = RecordingHooks()
    hooks.editor_writes = {}
    outcome = WriteFileTool().run(
        {"path": "ed.txt", "content": "via editor"}, make_ctx(tmp_path, hooks)
    )
    assert not outcome.failed
    assert hooks.editor_writes == {str(tmp_path / "ed.txt"): "via editor"}
    assert not (tmp_path / "ed.txt").exists()


def test_write_file_with_identical_content_asks_nothing(tmp_path: Path) -> None:
    (tmp_path / "same.txt").write_text("same")
    hooks = RecordingHooks()
    outcome = WriteFileTool().run(
        {"path": "same.txt", "content": "same"}, make_ctx(tmp_path, hooks)
    )
    assert json.loads(outcome.result_text)["unchanged"] is True
    assert hooks.edit_requests == []


def test_line_numbers_count_only_line_feeds(tmp_path: Path) -> None:
    """A form feed or U+2028 inside a line does not start a new one: ``read_file`` and
    ``search_files`` number lines as editors and ``patch`` do."""
    (tmp_path / "a.py").write_text("line1\n\x0c\nline3\nvalue = 'a\u2028b'\nline5\r\n")
    ctx = make_ctx(tmp_path)
    shown = ReadFileTool().run({"path": "a.py"}, ctx).result_text
    assert "     5|line5" in shown and "     4|value = 'a\u2028b'" in shown
    found = json.loads(SearchFilesTool().run({"pattern": "line5"}, ctx).result_text)
    assert [m["line"] for m in found["matches"]] == [5]
