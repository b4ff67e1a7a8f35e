"""The content of the terminal ``tool_call_update`` of a call, and its status.

Results of the file, search, shell and todo tools get a curated rendering with the
Hermes caps (read_file fenced within 5000 chars, search within 7000, shell output
within 5000, edits as diffs); the other curated Hermes tools are rendered in
:mod:`acpwire.render._hermes_results`; anything else shows its text, first 4900
chars plus a note when longer than 5000.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

from acp_v1 import models as m
from acpwire.agent.seam import EditProposal
from acpwire.render._content import Content, diff_content, text_content
from acpwire.render._hermes_results import HERMES_RENDERERS, failure_text, structured
from acpwire.render._paths import absolute
from acpwire.render._starts import EDIT_TOOLS
from acpwire.render.text import (
    fenced_within,
    one_line,
    parse_json_object,
    str_arg,
    text_of,
    truncate,
)

GENERIC_LIMIT = 5000
READ_LIMIT = 5000
SEARCH_LIMIT = 7000
SEARCH_FILES_SHOWN = 20
SEARCH_MATCHES_SHOWN = 12
SNIPPET_LIMIT = 300
OUTPUT_LIMIT = 5000
ERROR_LIMIT = 2000
EDIT_LIMIT = 3000
RAW_OUTPUT_LIMIT = 50_000
NO_OUTPUT: Final = "(no output)"
EXECUTOR_ERROR_PREFIX: Final = "Error executing tool '"

Renderer = Callable[[str, dict[str, Any] | None, dict[str, Any]], str | None]


def result_failed(result: str) -> bool:
    """Whether a result reports a failure although the call itself did not say so.

    Structured signals only: ``success``/``ok`` false, a non-zero ``exit_code`` or
    ``returncode``, or an ``error`` without ``content``. Plain text that merely
    mentions "error" is a success.
    """
    if result.startswith(EXECUTOR_ERROR_PREFIX):
        return True
    data = parse_json_object(result)
    if data is None:
        return False
    if data.get("success") is False or data.get("ok") is False:
        return True
    exit_code = data.get("exit_code", data.get("returncode"))
    if isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code != 0:
        return True
    return bool(data.get("error")) and not data.get("content")


def raw_output(result: str) -> object:
    """The ``raw_output`` of an uncurated tool: its JSON value, or its text (capped)."""
    if len(result) > RAW_OUTPUT_LIMIT:
        return truncate(result, RAW_OUTPUT_LIMIT)
    try:
        return json.loads(result)
    except (json.JSONDecodeError, RecursionError):
        return result


def end_content(
    name: str,
    args: dict[str, Any],
    result: str,
    failed: bool,
    cwd: str,
    proposals: list[EditProposal] | None,
    *,
    polished: bool,
) -> list[Content]:
    """The content of the completion of ``name`` (never empty)."""
    data = parse_json_object(result)
    if name in EDIT_TOOLS:
        return _edit_end(name, args, result, data, failed, cwd, proposals)
    if failed and data is None:
        # Plain text from a failed call is an error message, not output to format.
        return [text_content(truncate(result, GENERIC_LIMIT) if result.strip() else NO_OUTPUT)]
    render = _RENDERERS.get(name) or HERMES_RENDERERS.get(name)
    text = render(result, data, args) if render is not None else None
    if text is None and polished and data is not None:
        text = failure_text(name, data) if failed else None
        text = text or structured(name, data, GENERIC_LIMIT)
    if text is None:
        text = truncate(result, GENERIC_LIMIT)
    return [text_content(text if text.strip() else NO_OUTPUT)]


def _edit_end(
    name: str,
    args: dict[str, Any],
    result: str,
    data: dict[str, Any] | None,
    failed: bool,
    cwd: str,
    proposals: list[EditProposal] | None,
) -> list[Content]:
    if failed:
        reason = failure_text(name, data) if data is not None else None
        return [text_content(truncate(reason or result or f"{name} failed", EDIT_LIMIT))]
    if proposals:
        return [diff_content(p, absolute(p.path, cwd)) for p in proposals]
    path = str_arg(args, "path")
    content = args.get("content")
    created = data is not None and data.get("created") is True
    if name == "write_file" and created and path and isinstance(content, str):
        # A new file: the whole content is the diff, even without a proposal.
        return [m.ToolCallContentDiff(path=absolute(path, cwd), old_text=None, new_text=content)]
    return [text_content(_edit_summary(name, path, data, result))]


def _edit_summary(name: str, path: str, data: dict[str, Any] | None, result: str) -> str:
    if data is None:
        return truncate(result, EDIT_LIMIT) if result.strip() else f"{name} completed"
    where = str_arg(data, "path") or path
    if name == "write_file" and where:
        if data.get("unchanged") is True:
            return f"{where} is unchanged."
        written = data.get("bytes_written")
        size = f" ({written} bytes)" if isinstance(written, int) else ""
        return f"Wrote {where}{size}."
    files = data.get("files")
    if isinstance(files, list) and files:
        lines = [f"Patched {len(files)} file{'s' if len(files) != 1 else ''}:"]
        for entry in files:
            if isinstance(entry, dict):
                lines.append(f"- {str_arg(entry, 'path')}: {str_arg(entry, 'action') or 'changed'}")
            else:
                lines.append(f"- {text_of(entry)}")
        return truncate("\n".join(lines), EDIT_LIMIT)
    count = data.get("replacements")
    if where and isinstance(count, int):
        return f"Edited {where}: {count} replacement{'s' if count != 1 else ''}."
    return structured(name, data, EDIT_LIMIT)


def _read(result: str, data: dict[str, Any] | None, args: dict[str, Any]) -> str | None:
    path = str_arg(args, "path") or "file"
    bits = [
        f"{label} {args[key]}"
        for key, label in (("offset", "from line"), ("limit", "limit"))
        if isinstance(args.get(key), int) and not isinstance(args.get(key), bool)
    ]
    header = f"Read {path}" + (f" ({', '.join(bits)})" if bits else "")
    body = result
    if data is not None:
        content = data.get("content")
        if data.get("error") and not content:
            return truncate(f"Read failed: {text_of(data.get('error'))}", READ_LIMIT)
        if not isinstance(content, str):
            return None
        body = content
        total = data.get("total_lines")
        header += f" - {total} lines in total" if isinstance(total, int) else ""
    return fenced_within(body, READ_LIMIT, header=header)


def _search(result: str, data: dict[str, Any] | None, args: dict[str, Any]) -> str | None:
    if data is None:
        return None
    files, matches = data.get("files"), data.get("matches")
    items = files if isinstance(files, list) else matches
    if not isinstance(items, list):
        return None
    cap = SEARCH_FILES_SHOWN if items is files else SEARCH_MATCHES_SHOWN
    noun = ("file", "files") if items is files else ("match", "matches")
    total = data.get("total_count", data.get("count", len(items)))
    shown = items[:cap]
    lines = [f"Found {total} {noun[0] if total == 1 else noun[1]}; showing {len(shown)}.", ""]
    for item in shown:
        if items is files or not isinstance(item, dict):
            lines.append(f"- {one_line(text_of(item), SNIPPET_LIMIT)}")
            continue
        where = str_arg(item, "path", "file") or "?"
        line = str_arg(item, "line", "line_number")
        lines.append(f"- {where}:{line}" if line else f"- {where}")
        snippet = one_line(text_of(item.get("text", item.get("content"))), SNIPPET_LIMIT)
        if snippet:
            lines.append(f"  {snippet}")
    if data.get("truncated") is True or len(items) > cap:
        lines += ["", "Results truncated: narrow the pattern or the path."]
    return truncate("\n".join(lines), SEARCH_LIMIT)


def _shell(result: str, data: dict[str, Any] | None, args: dict[str, Any]) -> str | None:
    if data is None:
        return None
    parts: list[str] = []
    error = text_of(data.get("error")).strip()
    if error:
        parts.append(f"Error: {truncate(error, ERROR_LIMIT)}")
    reason = text_of(data.get("reason")).strip()
    if reason:
        parts.append(f"Reason: {one_line(reason, 500)}")
    output = text_of(data.get("output", data.get("stdout"))).rstrip("\n")
    if output.strip():
        parts.append(fenced_within(output, OUTPUT_LIMIT))
    stderr = text_of(data.get("stderr")).rstrip("\n")
    if stderr.strip():
        parts.append(fenced_within(stderr, ERROR_LIMIT, header="stderr:"))
    removed = data.get("protected_paths_removed")
    if isinstance(removed, list) and removed:
        names = [text_of(item.get("path")) for item in removed if isinstance(item, dict)]
        parts.append(
            "Protected paths this command created were moved to acpwire's quarantine: "
            + one_line(", ".join(names), 500)
        )
    exit_code = data.get("exit_code", data.get("returncode"))
    if not parts:
        parts.append(NO_OUTPUT)
    if isinstance(exit_code, int) and not isinstance(exit_code, bool):
        parts.append(f"Exit code: {exit_code}")
    return "\n\n".join(parts)


def _todo(result: str, data: dict[str, Any] | None, args: dict[str, Any]) -> str | None:
    todos = data.get("todos") if data is not None else None
    if not isinstance(todos, list):
        return None
    entries = [item for item in todos if isinstance(item, dict)]
    counts: dict[str, int] = {}
    for item in entries:
        status = str_arg(item, "status") or "pending"
        counts[status] = counts.get(status, 0) + 1
    summary = ", ".join(f"{count} {status.replace('_', ' ')}" for status, count in counts.items())
    lines = [f"Todo list: {len(entries)} item{'s' if len(entries) != 1 else ''}"]
    lines[0] += f" ({summary})" if summary else ""
    for item in entries:
        content = one_line(str_arg(item, "content") or str_arg(item, "id") or "?", 300)
        lines.append(f"- [{str_arg(item, 'status') or 'pending'}] {content}")
    return truncate("\n".join(lines), GENERIC_LIMIT)


_RENDERERS: Mapping[str, Renderer] = MappingProxyType(
    {
        "read_file": _read,
        "search_files": _search,
        "terminal": _shell,
        "execute_code": _shell,
        "todo": _todo,
    }
)
