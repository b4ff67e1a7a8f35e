"""The patch tool: exact, whitespace-insensitive and similarity replace; V4A multi-file patches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acpwire.agent.embedded.tools.args import ToolArgError
from acpwire.agent.embedded.tools.edits.fuzzy import PatchError, fuzzy_replace
from acpwire.agent.embedded.tools.edits.patch import PatchTool
from acpwire.agent.embedded.tools.edits.v4a import parse_patch
from tests.agent.recording import RecordingHooks, make_ctx

SOURCE = """def greet(name):
    message = "hello " + name
    print(message)
    return message


def part():
    return 1
"""


def _replace(
    tmp_path: Path, hooks: RecordingHooks, **args: object
) -> tuple[bool, dict[str, object]]:
    outcome_args = {"mode": "replace", "path": "m.py", **args}
    try:
        outcome = PatchTool().run(outcome_args, make_ctx(tmp_path, hooks))
    except ToolArgError as exc:
        return True, {"error": str(exc)}
    return outcome.failed, json.loads(outcome.result_text)


def test_exact_replace_proposes_the_full_file(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    hooks = RecordingHooks()
    failed, result = _replace(tmp_path, hooks, old_string='"hello "', new_string='"hi "')
    assert not failed and result["match"] == "exact" and result["replacements"] == 1
    assert (tmp_path / "m.py").read_text() == SOURCE.replace('"hello "', '"hi "')
    [(_, [proposal])] = hooks.edit_requests
    assert (proposal.old_text, proposal.new_text) == (SOURCE, SOURCE.replace('"hello "', '"hi "'))


def test_whitespace_insensitive_match_reindents_the_replacement(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    # The model dropped the indentation and doubled a space.
    old = 'message = "hello "  + name\nprint(message)'
    new = 'message = "hey " + name\nprint(message.upper())'
    failed, result = _replace(tmp_path, RecordingHooks(), old_string=old, new_string=new)
    assert not failed and result["match"] == "whitespace"
    text = (tmp_path / "m.py").read_text()
    assert '    message = "hey " + name\n    print(message.upper())\n' in text


def test_similarity_match_tolerates_a_small_typo(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    old = '    mesage = "hello " + name\n    print(message)\n    return message'
    failed, result = _replace(
        tmp_path, RecordingHooks(), old_string=old, new_string="    return name"
    )
    assert not failed and result["match"] == "similarity"
    assert (tmp_path / "m.py").read_text().startswith("def greet(name):\n    return name\n\n")


def test_ambiguous_match_is_refused_and_nothing_is_asked(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("x = 1\ny = 2\nx = 1\n")
    hooks = RecordingHooks()
    failed, result = _replace(tmp_path, hooks, old_string="x = 1", new_string="x = 3")
    assert failed and "matches 2 places" in str(result["error"])
    assert hooks.edit_requests == []
    assert (tmp_path / "m.py").read_text() == "x = 1\ny = 2\nx = 1\n"
    failed, result = _replace(
        tmp_path, hooks, old_string="x = 1", new_string="x = 3", replace_all=True
    )
    assert not failed and result["replacements"] == 2
    assert (tmp_path / "m.py").read_text() == "x = 3\ny = 2\nx = 3\n"


def test_ambiguous_whitespace_match_is_refused() -> None:
    text = "if a:\n    run()\nif b:\n        run()\n"
    with pytest.raises(PatchError, match="matches 2 places"):
        fuzzy_replace(text, "run( )", "stop()")
    with pytest.raises(PatchError, match="matches 2 places"):
        fuzzy_replace(text, "  run()", "stop()")


def test_no_match_and_denied_edit(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    failed, result = _replace(
        tmp_path, RecordingHooks(), old_string="completely absent text", new_string="x"
    )
    assert failed and "not found" in str(result["error"])
    hooks = RecordingHooks(approve_edits=False)
    failed, result = _replace(tmp_path, hooks, old_string="return 1", new_string="return 2")
    assert failed and result == {"error": "Edit denied by the user; file was not modified."}
    assert (tmp_path / "m.py").read_text() == SOURCE


def test_crlf_files_keep_their_line_endings() -> None:
    result = fuzzy_replace("a\r\n  b\r\nc\r\n", "a\nb", "a\nB")
    assert result.text == "a\r\n  B\r\nc\r\n"


V4A = """*** Begin Patch
*** Update File: src/app.py
@@ def main():
-    print("old")
+    print("new")
*** Add File: docs/notes.md
+# Notes
+first
*** Delete File: junk.txt
*** Update File: rename_me.txt
*** Move to: renamed.txt
@@
 keep
-drop
+added
*** End Patch
"""


def _tree(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text(
        'import os\n\n\ndef main():\n    print("old")\n    return 0\n'
    )
    (root / "junk.txt").write_text("bye\n")
    (root / "rename_me.txt").write_text("keep\ndrop\n")


def test_v4a_multi_file_patch_one_proposal_per_file(tmp_path: Path) -> None:
    _tree(tmp_path)
    hooks = RecordingHooks()
    outcome = PatchTool().run({"mode": "patch", "patch": V4A}, make_ctx(tmp_path, hooks))
    assert not outcome.failed, outcome.result_text
    [(_, proposals)] = hooks.edit_requests
    by_path = {p.path: p for p in proposals}
    assert len(proposals) == 5 == len(by_path)
    assert by_path[str(tmp_path / "docs" / "notes.md")].old_text is None
    assert by_path[str(tmp_path / "junk.txt")].new_text == ""
    assert by_path[str(tmp_path / "renamed.txt")].new_text == "keep\nadded\n"
    assert (
        tmp_path / "src" / "app.py"
    ).read_text() == 'import os\n\n\ndef main():\n    print("new")\n    return 0\n'
    assert (tmp_path / "docs" / "notes.md").read_text() == "# Notes\nfirst\n"
    assert not (tmp_path / "junk.txt").exists()
    assert not (tmp_path / "rename_me.txt").exists()
    assert (tmp_path / "renamed.txt").read_text() == "keep\nadded\n"
    actions = [entry["action"] for entry in json.loads(outcome.result_text)["files"]]
    assert actions == ["updated", "added", "deleted", f"moved from {tmp_path / 'rename_me.txt'}"]


def test_v4a_denied_changes_nothing(tmp_path: Path) -> None:
    _tree(tmp_path)
    before = {p: p.read_text() for p in tmp_path.rglob("*") if p.is_file()}
    outcome = PatchTool().run(
        {"mode": "patch", "patch": V4A}, make_ctx(tmp_path, RecordingHooks(approve_edits=False))
    )
    assert outcome.failed
    assert {p: p.read_text() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_v4a_mismatched_hunk_fails_before_asking(tmp_path: Path) -> None:
    _tree(tmp_path)
    patch = (
        "*** Begin Patch\n*** Update File: src/app.py\n-    print('absent')\n+    x\n*** End Patch"
    )
    hooks = RecordingHooks()
    with pytest.raises(PatchError, match="hunk 1 does not match"):
        PatchTool().run({"mode": "patch", "patch": patch}, make_ctx(tmp_path, hooks))
    assert hooks.edit_requests == []


def test_v4a_whitespace_tolerant_hunk_and_blank_separator_lines(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    a = 1   \n    b = 2\n")
    patch = "*** Begin Patch\n*** Update File: a.py\n@@ def f():\n     a = 1\n-    b = 2\n+    b = 3\n\n*** End Patch"
    outcome = PatchTool().run({"mode": "patch", "patch": patch}, make_ctx(tmp_path))
    assert not outcome.failed, outcome.result_text
    assert (tmp_path / "a.py").read_text() == "def f():\n    a = 1\n    b = 3\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("*** Update File: a\n-x\n*** End Patch", "must start with"),
        ("*** Begin Patch\n*** Update File: a\n-x\n", "must end with"),
        ("*** Begin Patch\n*** End Patch", "no file operations"),
        ("*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch", "must start with '\\+'"),
        ("*** Begin Patch\n*** Update File: a\n?odd\n*** End Patch", "hunk lines must start"),
        ("*** Begin Patch\n*** Move to: b\n*** End Patch", "must follow"),
    ],
)
def test_v4a_malformed_patches(text: str, message: str) -> None:
    with pytest.raises(PatchError, match=message):
        parse_patch(text)


def test_v4a_add_of_an_existing_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "there.txt").write_text("x\n")
    patch = "*** Begin Patch\n*** Add File: there.txt\n+y\n*** End Patch"
    with pytest.raises(ToolArgError, match="already exists"):
        PatchTool().run({"mode": "patch", "patch": patch}, make_ctx(tmp_path))


def test_a_blank_line_after_an_added_file_is_spacing_not_content() -> None:
    """A bare blank line before the next header separates files; between ``+`` lines it
    is a blank line of the file."""
    ops = parse_patch(
        "*** Begin Patch\n*** Add File: a.txt\n+hello\n\n+world\n\n"
        "*** Update File: b.txt\n@@\n-x\n+y\n*** End Patch"
    )
    assert ops[0].added == ["hello", "", "world"]
