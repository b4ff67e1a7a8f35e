"""The ``search_files`` tool: regex search of file contents, or glob search of file names.

Pure Python, so it works without ripgrep. Version-control and dependency folders are
skipped, as are binary, very large and non-regular files (FIFOs, devices, sockets, links
to them). Results are in path order, capped by ``limit`` and ``[tools]
max_result_chars``. A content search runs in a worker process (:mod:`.grep`) that is
killed at a cancel or after ``[tools] search_timeout_s``, so a catastrophic regex stops
burning CPU; a name search checks both between entries.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import os
import re
import subprocess
import sys
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from acpwire.agent.embedded.tools.args import ToolArgError, opt_int, opt_str, req_str
from acpwire.agent.embedded.tools.base import ToolContext, ToolOutcome, failure, success
from acpwire.agent.embedded.tools.fs.fileio import resolve_path
from acpwire.agent.embedded.tools.grep import BOOT, display, walk
from acpwire.agent.seam import AccessProposal

log = logging.getLogger(__name__)

_CHILD_ENV = ("PATH", "SYSTEMROOT", "TMPDIR", "LANG", "LC_ALL")


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
        refused = ctx.hooks.approve_access(ctx.call_id, AccessProposal("read", root))
        if refused is not None:
            return failure(refused)
        if not os.path.exists(root):
            raise ToolArgError(f"path not found: {root}")
        if target == "files":
            return _find_files(root, pattern, file_glob, limit, ctx)
        if target == "content":
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ToolArgError(f"invalid regular expression {pattern!r}: {exc}") from exc
            request = {
                "sys_path": [p for p in sys.path if p],
                "root": root,
                "pattern": pattern,
                "file_glob": file_glob,
                "limit": limit,
                "max_file_bytes": ctx.limits.max_file_bytes,
                "max_result_chars": ctx.limits.max_result_chars,
            }
            return _grep(request, ctx)
        raise ToolArgError(f"argument 'target' must be 'content' or 'files', got {target!r}")


def _find_files(
    root: str, pattern: str, file_glob: str | None, limit: int, ctx: ToolContext
) -> ToolOutcome:
    glob = pattern if any(char in pattern for char in "*?[") else f"*{pattern}*"
    deadline = time.monotonic() + ctx.limits.search_timeout_s
    found: list[str] = []
    truncated = False
    budget = ctx.limits.max_result_chars
    for path in walk(root):
        if ctx.cancel.cancelled:
            return failure("interrupted", files=found)
        if time.monotonic() > deadline:
            return failure(_timed_out(ctx), files=found)
        shown = display(path, root)
        matches = fnmatch.fnmatch(shown, glob) if "/" in glob else fnmatch.fnmatch(path.name, glob)
        if matches and (file_glob is None or fnmatch.fnmatch(path.name, file_glob)):
            budget -= len(shown) + 4
            if len(found) == limit or (budget < 0 and found):
                truncated = True
                break
            found.append(shown)
    return success({"root": root, "files": found, "count": len(found), "truncated": truncated})


def _timed_out(ctx: ToolContext) -> str:
    return (
        f"the search was stopped after {ctx.limits.search_timeout_s:g}s ([tools] "
        "search_timeout_s); narrow the path or file_glob, or simplify the pattern (nested "
        "quantifiers such as (a+)+ can take forever)"
    )


def _grep(request: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
    env = {name: os.environ[name] for name in _CHILD_ENV if name in os.environ}
    child = subprocess.Popen(
        [sys.executable, "-I", "-c", BOOT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ctx.cwd if os.path.isdir(ctx.cwd) else None,
    )
    unregister = ctx.cancel.on_cancel(child.kill)
    stopped: str | None = None
    try:
        try:
            out, err = child.communicate(
                json.dumps(request).encode() + b"\n", timeout=ctx.limits.search_timeout_s
            )
        except subprocess.TimeoutExpired:
            stopped = _timed_out(ctx)
            child.kill()
            out, err = child.communicate()
    finally:
        unregister()
        if child.poll() is None:  # an error above: never leave the worker running
            child.kill()
            child.wait()
    if ctx.cancel.cancelled:
        stopped = "interrupted"
    matches: list[dict[str, Any]] = []
    summary: dict[str, Any] | None = None
    for line in out.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            break  # a line cut by the kill
        if isinstance(item, dict) and item.get("done"):
            summary = item
        elif isinstance(item, dict):
            matches.append(item)
    if stopped is not None:
        return failure(stopped, matches=matches, count=len(matches))
    if summary is None:
        log.warning(
            "search worker failed (exit %s): %s",
            child.returncode,
            err.decode(errors="replace")[-2000:],
        )
        return failure(f"the search failed: {err.decode(errors='replace').strip()[-500:]}")
    result: dict[str, Any] = {
        "root": request["root"],
        "matches": matches,
        "count": len(matches),
        "truncated": bool(summary.get("truncated")),
    }
    if summary.get("skipped"):
        result["skipped_not_regular"] = summary["skipped"]
    return success(result)
