"""Tool calls as ACP ``tool_call`` / ``tool_call_update`` payloads: kinds, titles, locations.

Kinds, titles and truncation caps follow the Hermes ACP adapter, so users moving
from it see the same thing. Unlike Hermes, rendering never raises: arguments are
coerced to a dict first, and any unexpected rendering error falls back to plain
text, so every call still gets its terminal ``tool_call_update``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from acp_v1 import models as m
from acpwire.agent.seam import EditProposal, ToolEnd, ToolStart
from acpwire.render._content import Content, text_content
from acpwire.render._paths import absolute, patch_paths
from acpwire.render._results import end_content, raw_output, result_failed
from acpwire.render._starts import GATED_EDIT_TOOLS, start_content
from acpwire.render._titles import tool_title as tool_title
from acpwire.render.text import coerce_args, jsonable, pretty_json, str_arg, text_of

log = logging.getLogger(__name__)

TOOL_KIND_MAP: Final[Mapping[str, m.KnownToolKind]] = MappingProxyType(
    {
        "read_file": "read",
        "write_file": "edit",
        "patch": "edit",
        "search_files": "search",
        "terminal": "execute",
        "process": "execute",
        "execute_code": "execute",
        "todo": "other",
        "skill_view": "read",
        "skills_list": "read",
        "skill_manage": "edit",
        "web_search": "fetch",
        "web_extract": "fetch",
        "browser_navigate": "fetch",
        "browser_click": "execute",
        "browser_type": "execute",
        "browser_snapshot": "read",
        "browser_vision": "read",
        "browser_scroll": "execute",
        "browser_press": "execute",
        "browser_back": "execute",
        "browser_get_images": "read",
        "delegate_task": "execute",
        "vision_analyze": "read",
        "image_generate": "execute",
        "text_to_speech": "execute",
        "_thinking": "think",
    }
)
"""Hermes tool name → ACP tool kind; anything else is ``"other"``."""

MCP_SEPARATOR: Final = "__"
"""MCP tools are registered as ``<server>__<tool>``."""

POLISHED_TOOLS: Final = frozenset(
    {
        *("todo", "memory", "session_search", "delegate_task", "read_file", "write_file"),
        *("patch", "search_files", "terminal", "process", "execute_code", "skill_view"),
        *("skills_list", "skill_manage", "web_search", "web_extract", "vision_analyze"),
        *(f"browser_{n}" for n in ("navigate", "click", "type", "press", "scroll", "back")),
        *(f"browser_{n}" for n in ("snapshot", "console", "get_images", "vision")),
        *("image_generate", "text_to_speech", "cronjob", "send_message", "clarify"),
        *("discord", "discord_admin"),
        *(f"ha_{n}" for n in ("list_entities", "get_state", "list_services", "call_service")),
        *(f"feishu_{n}" for n in ("doc_read", "drive_list_comments")),
        *(f"feishu_{n}" for n in ("drive_list_comment_replies", "drive_reply_comment")),
        "feishu_drive_add_comment",
        *(f"kanban_{n}" for n in ("create", "show", "comment", "complete", "block", "link")),
        "kanban_heartbeat",
        *(f"yb_{n}" for n in ("query_group_info", "query_group_members", "search_sticker")),
        *("yb_send_dm", "yb_send_sticker"),
    }
)
"""Tools with a curated rendering; they never send ``raw_input`` / ``raw_output``."""


def tool_kind(name: str) -> m.KnownToolKind:
    """The ACP kind of a tool; an MCP tool takes the kind of its own name when known."""
    if name in TOOL_KIND_MAP:
        return TOOL_KIND_MAP[name]
    server, _, inner = name.partition(MCP_SEPARATOR)
    if server and inner:
        return TOOL_KIND_MAP.get(inner, "other")
    return "other"


def _line(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    return None


def tool_locations(name: str, args: object, cwd: str) -> list[m.ToolCallLocation]:
    """The files a call touches, absolute, with a line when one is known."""
    values = coerce_args(args)
    paths = [str_arg(values, "path")] if str_arg(values, "path") else []
    if name == "patch" and not paths:
        paths = patch_paths(values)
    # read_file's offset is a line number; other tools use offset for paging results.
    line = _line(values.get("line")) or (
        _line(values.get("offset")) if name == "read_file" else None
    )
    return [
        m.ToolCallLocation(path=absolute(path, cwd), line=line if index == 0 else None)
        for index, path in enumerate(paths)
    ]


def start_update(
    start: ToolStart, *, cwd: str, edit_preview: list[EditProposal] | None = None
) -> m.SessionUpdateToolCall:
    """The ``tool_call`` announcing ``start``.

    Edit tools whose changes are not known yet are ``pending`` (the approval prompt
    will show the diff); everything else is ``in_progress``.
    """
    args = coerce_args(start.args)
    polished = is_polished(start.name)
    try:
        content = start_content(start.name, args, cwd, edit_preview)
    except Exception:  # fall back to the arguments rather than lose the start
        log.exception("rendering the start of %s (%s) failed", start.name, start.call_id)
        content = [text_content(pretty_json(args, 1200))] if args else None
    awaiting = start.name in GATED_EDIT_TOOLS and edit_preview is None
    return m.SessionUpdateToolCall(
        tool_call_id=start.call_id,
        title=tool_title(start.name, args),
        kind=tool_kind(start.name),
        status="pending" if awaiting else "in_progress",
        locations=_locations(start.name, args, cwd, edit_preview),
        content=content,
        raw_input=None if polished else jsonable(args),
    )


def end_update(
    end: ToolEnd, *, cwd: str, proposals: list[EditProposal] | None = None
) -> m.SessionUpdateToolCallUpdate:
    """The terminal ``tool_call_update`` of ``end``: ``completed`` or ``failed``."""
    args = coerce_args(end.args)
    # Agents behind adapters have been seen to hand back None or dicts as results.
    result = end.result if isinstance(end.result, str) else text_of(end.result)
    failed = end.failed or result_failed(result)
    polished = is_polished(end.name)
    content: list[Content]
    try:
        content = end_content(end.name, args, result, failed, cwd, proposals, polished=polished)
    except Exception:  # fall back to the raw text rather than lose the completion
        log.exception("rendering the end of %s (%s) failed", end.name, end.call_id)
        content = [text_content(result[:4900] or "(no output)")]
    return m.SessionUpdateToolCallUpdate(
        tool_call_id=end.call_id,
        kind=tool_kind(end.name),
        status="failed" if failed else "completed",
        locations=_locations(end.name, args, cwd, proposals) if proposals else None,
        content=content,
        raw_output=None if polished else raw_output(result),
    )


def terminal_content(terminal_id: str) -> m.ToolCallContentTerminal:
    """Content embedding a client terminal (created with ``terminal/create``) in a call."""
    return m.ToolCallContentTerminal(terminal_id=terminal_id)


def _locations(
    name: str, args: dict[str, Any], cwd: str, proposals: list[EditProposal] | None
) -> list[m.ToolCallLocation]:
    if proposals:
        return [m.ToolCallLocation(path=absolute(p.path, cwd)) for p in proposals]
    return tool_locations(name, args, cwd)


def is_polished(name: str) -> bool:
    return name in POLISHED_TOOLS
