"""Short human titles for tool calls (``terminal: ls -la``), per the Hermes formats."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from acpwire.render._paths import patch_paths
from acpwire.render.text import coerce_args, one_line, str_arg

log = logging.getLogger(__name__)

_TITLE_CAP = 120
_Title = Callable[[dict[str, Any]], str]


def _patch_title(args: dict[str, Any]) -> str:
    mode = str_arg(args, "mode") or "replace"
    paths = [str_arg(args, "path")] if str_arg(args, "path") else patch_paths(args)
    if not paths:
        return ""
    extra = f" (+{len(paths) - 1})" if len(paths) > 1 else ""
    return f"patch ({mode}): {paths[0]}{extra}"


def _extract_title(args: dict[str, Any]) -> str:
    urls = args.get("urls")
    if isinstance(urls, list) and urls:
        extra = f" (+{len(urls) - 1})" if len(urls) > 1 else ""
        return f"extract: {one_line(str(urls[0]), _TITLE_CAP)}{extra}"
    url = str_arg(args, "url")
    return f"extract: {url}" if url else ""


def _delegate_title(args: dict[str, Any]) -> str:
    tasks = args.get("tasks")
    if isinstance(tasks, list) and tasks:
        return f"delegate batch ({len(tasks)} tasks)"
    goal = str_arg(args, "goal")
    return f"delegate: {one_line(goal, 60)}" if goal else ""


def _code_title(args: dict[str, Any]) -> str:
    code = str_arg(args, "code")
    first = next((line for line in code.splitlines() if line.strip()), "")
    return f"python: {one_line(first, 70)}" if first else ""


def _todo_title(args: dict[str, Any]) -> str:
    todos = args.get("todos")
    return f"todo ({len(todos)} items)" if isinstance(todos, list) else "todo (read)"


def _skill_view_title(args: dict[str, Any]) -> str:
    name = str_arg(args, "name")
    file = str_arg(args, "file_path", "file")
    return f"skill view ({name}/{file})" if file else f"skill view ({name})" if name else ""


def _pair(label: str, first: str, second: str, cap: int = _TITLE_CAP) -> _Title:
    """A title ``<label> <args[first]>: <args[second]>`` (either part may be missing)."""

    def title(args: dict[str, Any]) -> str:
        head = f"{label} {str_arg(args, first)}".rstrip()
        tail = one_line(str_arg(args, second), cap)
        if head == label and not tail:
            return ""
        return f"{head}: {tail}" if tail else head

    return title


def _simple(label: str, *keys: str, cap: int = _TITLE_CAP) -> _Title:
    """A title ``<label>: <first of args[keys]>`` cut to ``cap`` chars."""

    def title(args: dict[str, Any]) -> str:
        value = str_arg(args, *keys)
        return f"{label}: {one_line(value, cap)}" if value else ""

    return title


def _session_search_title(args: dict[str, Any]) -> str:
    query = str_arg(args, "query")
    return f"session search: {one_line(query, _TITLE_CAP)}" if query else "recent sessions"


def _skills_list_title(args: dict[str, Any]) -> str:
    category = str_arg(args, "category")
    return f"skills list ({category})" if category else "skills list"


_TITLES: Mapping[str, _Title] = MappingProxyType(
    {
        "terminal": _simple("terminal", "command", cap=80),
        "read_file": _simple("read", "path"),
        "write_file": _simple("write", "path"),
        "patch": _patch_title,
        "search_files": _simple("search", "pattern"),
        "web_search": _simple("web search", "query"),
        "web_extract": _extract_title,
        "process": _pair("process", "action", "session_id"),
        "delegate_task": _delegate_title,
        "session_search": _session_search_title,
        "memory": _pair("memory", "action", "target"),
        "execute_code": _code_title,
        "todo": _todo_title,
        "skill_view": _skill_view_title,
        "skills_list": _skills_list_title,
        "skill_manage": _pair("skill", "action", "name", cap=64),
        "browser_navigate": _simple("navigate", "url"),
        "browser_vision": _simple("browser vision", "question", cap=50),
        "vision_analyze": _simple("analyze image", "question", cap=50),
        "image_generate": _simple("generate image", "prompt", cap=50),
        "cronjob": _pair("cron", "action", "job_id"),
    }
)


def tool_title(name: str, args: object) -> str:
    """A short human title for a call (``terminal: ls -la``); the tool name as fallback."""
    build = _TITLES.get(name)
    if build is None:
        return name
    try:
        return build(coerce_args(args)) or name
    except Exception:  # a title must never cost the update
        log.exception("title for tool %s failed", name)
        return name
