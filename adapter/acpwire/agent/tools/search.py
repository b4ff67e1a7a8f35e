"""The ``search_files`` tool: regex search of file contents, or glob search of file names.

Pure Python, so it works without ripgrep. Version-control and dependency folders are
skipped, as are binary and very large files. Results are in path order, capped by
``limit``.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from acpwire.agent.tools.args import ToolArgError, opt_int, opt_str, req_str
from acpwire.agent.tools.base import ToolContext, ToolOutcome, success
from acpwire.agent.tools.fileio import resolve_path, split_lines

SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".tox",
    }
)
MAX_FILE_BYTES = 5_000_000
MAX_SNIPPET = 300


class SearchFilesTool:
    name = "search_files"
    description = (
        "Search file contents with a regex (target 'content') or find files whose names match"
        " a glob (target 'files')."
    )
    parameters: ClassVar[Mapping[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "Regex (content) or glob such as '*.py' (files).",
            },
            "target": {"type": "string", "enum": ["content", "files"], "default": "content"},
            "path": {
                "type": "string",
                "default": ".",
                "description": "Directory or file to search.",
            },
            "file_glob": {
                "type": "string",
                "description": "Only search files whose names match this glob.",
            },
            "limit": {
                "type": "integer",
                "default": 50,
                "description": "Maximum number of results.",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        pattern = req_str(args, "pattern")
        target = opt_str(args, "target", "content")
        root = resolve_path(ctx.cwd, opt_str(args, "path", ".") or ".")
        file_glob = opt_str(args, "file_glob")
        limit = opt_int(args, "limit", 50, minimum=1, maximum=1000)
        if not os.path.exists(root):
            raise ToolArgError(f"path not found: {root}")
        if target == "files":
            return _find_files(root, pattern, file_glob, limit)
        if target == "content":
            try:
                regex = re.compile(pattern)
            except re.error as exc:
                raise ToolArgError(f"invalid regular expression {pattern!r}: {exc}") from exc
            return _grep(root, regex, file_glob, limit)
        raise ToolArgError(f"argument 'target' must be 'content' or 'files', got {target!r}")


def _walk(root: str) -> Iterator[Path]:
    if os.path.isfile(root):
        yield Path(root)
        return
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(name for name in dirnames if name not in SKIPPED_DIRS)
        for filename in sorted(filenames):
            yield Path(directory, filename)


def _display(path: Path, root: str) -> str:
    base = root if os.path.isdir(root) else os.path.dirname(root)
    return os.path.relpath(path, base)


def _find_files(root: str, pattern: str, file_glob: str | None, limit: int) -> ToolOutcome:
    glob = pattern if any(char in pattern for char in "*?[") else f"*{pattern}*"
    found: list[str] = []
    truncated = False
    for path in _walk(root):
        shown = _display(path, root)
        matches = fnmatch.fnmatch(shown, glob) if "/" in glob else fnmatch.fnmatch(path.name, glob)
        if matches and (file_glob is None or fnmatch.fnmatch(path.name, file_glob)):
            if len(found) == limit:
                truncated = True
                break
            found.append(shown)
    return success({"root": root, "files": found, "count": len(found), "truncated": truncated})


def _read_searchable(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def _grep(root: str, regex: re.Pattern[str], file_glob: str | None, limit: int) -> ToolOutcome:
    matches: list[dict[str, object]] = []
    truncated = False
    for path in _walk(root):
        if file_glob is not None and not fnmatch.fnmatch(path.name, file_glob):
            continue
        text = _read_searchable(path)
        if text is None:
            continue
        for number, line in enumerate(split_lines(text), start=1):
            if regex.search(line):
                if len(matches) == limit:
                    truncated = True
                    break
                matches.append(
                    {"path": _display(path, root), "line": number, "text": line[:MAX_SNIPPET]}
                )
        if truncated:
            break
    return success(
        {"root": root, "matches": matches, "count": len(matches), "truncated": truncated}
    )
