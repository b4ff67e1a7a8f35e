"""The ``read_file`` and ``write_file`` tools (Hermes names and arguments)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from acpwire.agent.embedded.tools.args import opt_int, req_str
from acpwire.agent.embedded.tools.base import ToolContext, ToolOutcome, failure, success
from acpwire.agent.embedded.tools.fs.fileio import (
    FileChange,
    check_size,
    commit_changes,
    read_text,
    resolve_path,
    split_lines,
)
from acpwire.agent.embedded.tools.fs.regular import check_regular
from acpwire.agent.seam import AccessProposal

MAX_LINE_CHARS = 2000


class ReadFileTool:
    """Numbered lines (``LINE_NUM|CONTENT``) of a text file, a window at a time."""

    name = "read_file"
    description = "Read a text file with line numbers (LINE|content); page with offset and limit."
    parameters: ClassVar[Mapping[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File path, relative to the working directory or absolute.",
            },
            "offset": {
                "type": "integer",
                "description": "First line to read (1-based).",
                "default": 1,
            },
            "limit": {"type": "integer", "description": "Maximum number of lines.", "default": 500},
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        path = resolve_path(ctx.cwd, req_str(args, "path"))
        offset = opt_int(args, "offset", 1, minimum=1)
        limit = opt_int(args, "limit", 500, minimum=1, maximum=5000)
        check_regular(path)  # a device or FIFO is refused before anyone is asked
        refused = ctx.hooks.approve_access(ctx.call_id, AccessProposal("read", path))
        if refused is not None:
            return failure(refused)
        text = read_text(ctx, path)
        if text is None:
            return failure(f"file not found: {path}")
        lines = split_lines(text)
        if not lines:
            return ToolOutcome("(empty file)")
        if offset > len(lines):
            return failure(f"offset {offset} is past the end of the file ({len(lines)} lines)")
        window = lines[offset - 1 : offset - 1 + limit]
        numbered: list[str] = []
        budget = ctx.limits.max_result_chars
        for number, line in enumerate(window, start=offset):
            entry = f"{number:>6}|{_clip(line)}"
            budget -= len(entry) + 1
            if budget < 0 and numbered:  # over [tools] max_result_chars: the rest is paged
                break
            numbered.append(entry)
        last = offset + len(numbered) - 1
        if last < len(lines):
            numbered.append(f"... ({len(lines)} lines in total; continue with offset={last + 1})")
        return ToolOutcome("\n".join(numbered))


def _clip(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return f"{line[:MAX_LINE_CHARS]}... [line truncated, {len(line)} chars]"


class WriteFileTool:
    """Create or overwrite a whole file, after the user approves the diff."""

    name = "write_file"
    description = "Create or overwrite a file with the given content (the user approves the diff)."
    parameters: ClassVar[Mapping[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File path, relative to the working directory or absolute.",
            },
            "content": {"type": "string", "description": "The complete new content of the file."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    }

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        path = resolve_path(ctx.cwd, req_str(args, "path"))
        content = req_str(args, "content", allow_empty=True)
        check_size(ctx, path, content)
        old_text = read_text(ctx, path)
        result = {"path": path, "bytes_written": len(content.encode("utf-8"))}
        if old_text == content:
            return success({**result, "bytes_written": 0, "unchanged": True})
        denied = commit_changes(ctx, [FileChange(path, old_text, content)])
        if denied is not None:
            return denied
        return success({**result, "created": old_text is None})
