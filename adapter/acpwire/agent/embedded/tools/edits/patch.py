"""The ``patch`` tool: targeted find-and-replace edits or V4A multi-file patches.

Both modes first compute the complete new text of every file involved, then ask the
user to approve all of them at once (one proposal per file), then write.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from acpwire.agent.embedded.tools.args import ToolArgError, opt_bool, opt_str, req_str
from acpwire.agent.embedded.tools.base import ToolContext, ToolOutcome, success
from acpwire.agent.embedded.tools.edits.fuzzy import fuzzy_replace
from acpwire.agent.embedded.tools.edits.v4a import apply_hunks, parse_patch
from acpwire.agent.embedded.tools.fs.fileio import (
    FileChange,
    check_size,
    commit_changes,
    read_existing,
    read_text,
    resolve_path,
)


class PatchTool:
    name = "patch"
    description = (
        "Edit files: mode 'replace' swaps old_string for new_string in one file;"
        " mode 'patch' applies a V4A multi-file patch (*** Begin Patch ... *** End Patch)."
    )
    parameters: ClassVar[Mapping[str, Any]] = {
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": ["replace", "patch"], "default": "replace"},
            "path": {"type": "string", "description": "File to edit (mode 'replace')."},
            "old_string": {
                "type": "string",
                "description": "Text to find; include enough context to be unique.",
            },
            "new_string": {"type": "string", "description": "Replacement text."},
            "replace_all": {
                "type": "boolean",
                "default": False,
                "description": "Replace every occurrence.",
            },
            "patch": {"type": "string", "description": "V4A patch text (mode 'patch')."},
        },
        "additionalProperties": False,
    }

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        mode = opt_str(args, "mode", "replace")
        if mode == "replace":
            return self._replace(args, ctx)
        if mode == "patch":
            return self._patch(req_str(args, "patch"), ctx)
        raise ToolArgError(f"argument 'mode' must be 'replace' or 'patch', got {mode!r}")

    def _replace(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        path = resolve_path(ctx.cwd, req_str(args, "path"))
        old_string = req_str(args, "old_string")
        new_string = req_str(args, "new_string", allow_empty=True)
        old_text = read_existing(ctx, path)
        replaced = fuzzy_replace(
            old_text,
            old_string,
            new_string,
            replace_all=opt_bool(args, "replace_all", False),
            max_chars=ctx.limits.max_file_bytes,
        )
        check_size(ctx, path, replaced.text)
        denied = commit_changes(ctx, [FileChange(path, old_text, replaced.text)])
        if denied is not None:
            return denied
        return success({"path": path, "replacements": replaced.count, "match": replaced.strategy})

    def _patch(self, text: str, ctx: ToolContext) -> ToolOutcome:
        changes: list[FileChange] = []
        report: list[dict[str, str]] = []
        for op in parse_patch(text):
            path = resolve_path(ctx.cwd, op.path)
            if op.kind == "add":
                if read_text(ctx, path) is not None:
                    raise ToolArgError(f"cannot add {path}: it already exists (use Update File)")
                content = "\n".join(op.added) + "\n" if op.added else ""
                check_size(ctx, path, content)
                changes.append(FileChange(path, None, content))
                report.append({"path": path, "action": "added"})
                continue
            old_text = read_existing(ctx, path)
            if op.kind == "delete":
                changes.append(FileChange(path, old_text, "", delete=True))
                report.append({"path": path, "action": "deleted"})
                continue
            new_text = apply_hunks(old_text, op.hunks, path)
            check_size(ctx, path, new_text)
            if op.move_to is None:
                changes.append(FileChange(path, old_text, new_text))
                report.append({"path": path, "action": "updated"})
                continue
            target = resolve_path(ctx.cwd, op.move_to)
            if read_text(ctx, target) is not None:
                raise ToolArgError(f"cannot move {path} to {target}: the target exists")
            changes.append(FileChange(target, None, new_text))
            changes.append(FileChange(path, old_text, "", delete=True))
            report.append({"path": target, "action": f"moved from {path}"})
        paths = [change.path for change in changes]
        duplicates = sorted({path for path in paths if paths.count(path) > 1})
        if duplicates:
            raise ToolArgError(f"the patch touches a file more than once: {', '.join(duplicates)}")
        denied = commit_changes(ctx, changes)
        if denied is not None:
            return denied
        return success({"files": report})
