"""The content search of ``search_files``, run in a worker process that can be killed.

Python's ``re`` cannot be interrupted: a catastrophic pattern (``(a+)+$`` on a long line)
burns a core until it finishes. So the search runs in a child Python process that the
tool kills at a cancel or at ``[tools] search_timeout_s``; nothing keeps running after.
The child reads one JSON request on stdin and writes one JSON line per match, then a
last line with the totals. Only regular files are searched (a FIFO, a device or a link to
one is skipped, never opened; so is a link to a file outside the searched folder), each up to ``[tools] max_file_bytes``; the matches stop at
``limit`` or at ``[tools] max_result_chars`` of text. Stdlib only.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from acpwire.agent.embedded.tools.args import ToolArgError
from acpwire.agent.embedded.tools.fs.fileio import split_lines
from acpwire.agent.embedded.tools.fs.regular import FileRefused, FileTooLarge, read_regular

__all__ = ["BOOT", "SKIPPED_DIRS", "display", "grep", "walk"]

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
MAX_SNIPPET = 300
MAX_SKIPPED_LISTED = 20

BOOT = (
    "import json, sys\n"
    "request = json.loads(sys.stdin.readline())\n"
    "sys.path[:0] = request['sys_path']\n"
    "from acpwire.agent.embedded.tools.grep import serve\n"
    "serve(request)\n"
)
"""The child's program (``python -I -c BOOT``): the parent's import path comes first in the
request, so the child imports this same acpwire."""


def _leaves(path: str, real_root: str) -> bool:
    """A symlinked file whose target lies outside the searched folder (``notes ->
    ~/.ssh/id_rsa``): skipped, so a search never reads what a read would have asked for."""
    if not os.path.islink(path):
        return False
    target = os.path.realpath(path)
    outside = target != real_root and not target.startswith(real_root.rstrip("/") + "/")
    return outside and os.path.isfile(target)  # a link to a device is refused, and said so


def walk(root: str) -> Iterator[Path]:
    if os.path.isfile(root):
        yield Path(root)
        return
    real_root = os.path.realpath(root)
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(name for name in dirnames if name not in SKIPPED_DIRS)
        for filename in sorted(filenames):
            if not _leaves(os.path.join(directory, filename), real_root):
                yield Path(directory, filename)


def display(path: Path, root: str) -> str:
    base = root if os.path.isdir(root) else os.path.dirname(root)
    return os.path.relpath(path, base)


def _searchable(path: Path, max_bytes: int) -> str | None:
    try:
        data = read_regular(str(path), max_bytes)
    except FileTooLarge:
        return None  # a large file is skipped, as before
    except FileRefused:
        raise
    except ToolArgError:
        return None
    if data is None or b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def grep(request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Matches as ``{"path", "line", "text"}``, then ``{"done": ..., "truncated": ...,
    "skipped": [...]}`` (the non-regular files passed over)."""
    root = str(request["root"])
    regex = re.compile(str(request["pattern"]))
    file_glob = request.get("file_glob")
    limit = int(request["limit"])
    max_bytes = int(request["max_file_bytes"])
    budget = int(request["max_result_chars"])
    count, truncated = 0, False
    skipped: list[str] = []
    for path in walk(root):
        if file_glob is not None and not fnmatch.fnmatch(path.name, file_glob):
            continue
        try:
            text = _searchable(path, max_bytes)
        except FileRefused:
            if len(skipped) < MAX_SKIPPED_LISTED:
                skipped.append(display(path, root))
            continue
        if text is None:
            continue
        for number, line in enumerate(split_lines(text), start=1):
            if regex.search(line):
                match: dict[str, Any] = {
                    "path": display(path, root),
                    "line": number,
                    "text": line[:MAX_SNIPPET],
                }
                budget -= len(match["path"]) + len(match["text"]) + 32
                if count == limit or (budget < 0 and count):
                    truncated = True
                    break
                count += 1
                yield match
        if truncated:
            break
    yield {"done": True, "truncated": truncated, "skipped": skipped}


def serve(request: dict[str, Any]) -> None:
    """The child's main: answer ``request`` on stdout, one JSON object a line."""
    out = sys.stdout
    for item in grep(request):
        out.write(json.dumps(item) + "\n")
        out.flush()
