"""search_files over a real directory tree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acpwire.agent.embedded.tools.args import ToolArgError
from acpwire.agent.embedded.tools.search import SearchFilesTool
from tests.agent.recording import make_ctx


def _tree(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("import os\ndef alpha():\n    return 'needle'\n")
    (root / "src" / "b.txt").write_text("needle in text\nno match\nneedle again\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("needle\n")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "dep.js").write_text("needle\n")
    (root / "blob.bin").write_bytes(b"needle\0\1\2")


def _run(root: Path, **args: Any) -> dict[str, Any]:
    outcome = SearchFilesTool().run(args, make_ctx(root))
    assert not outcome.failed
    result: dict[str, Any] = json.loads(outcome.result_text)
    return result


def test_content_search_skips_vcs_dependencies_and_binaries(tmp_path: Path) -> None:
    _tree(tmp_path)
    result = _run(tmp_path, pattern=r"need+le")
    assert [(m["path"], m["line"]) for m in result["matches"]] == [
        ("src/a.py", 3),
        ("src/b.txt", 1),
        ("src/b.txt", 3),
    ]
    assert result["matches"][1]["text"] == "needle in text"
    assert result["truncated"] is False


def test_content_search_glob_path_and_limit(tmp_path: Path) -> None:
    _tree(tmp_path)
    only_py = _run(tmp_path, pattern="needle", file_glob="*.py")
    assert [m["path"] for m in only_py["matches"]] == ["src/a.py"]
    limited = _run(tmp_path, pattern="needle", path="src", limit=2)
    assert limited["count"] == 2 and limited["truncated"] is True
    assert limited["root"] == str(tmp_path / "src")


def test_files_mode_matches_names(tmp_path: Path) -> None:
    _tree(tmp_path)
    assert _run(tmp_path, pattern="*.py", target="files")["files"] == ["src/a.py"]
    # Without wildcards the pattern is a substring of the name.
    assert _run(tmp_path, pattern="b.t", target="files")["files"] == ["src/b.txt"]
    assert _run(tmp_path, pattern="src/*", target="files")["files"] == ["src/a.py", "src/b.txt"]


def test_bad_regex_and_missing_path_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ToolArgError, match="invalid regular expression"):
        SearchFilesTool().run({"pattern": "(unclosed"}, make_ctx(tmp_path))
    with pytest.raises(ToolArgError, match="path not found"):
        SearchFilesTool().run({"pattern": "x", "path": "nowhere"}, make_ctx(tmp_path))
    with pytest.raises(ToolArgError, match="'target' must be"):
        SearchFilesTool().run({"pattern": "x", "target": "lines"}, make_ctx(tmp_path))
