"""Completions of the curated Hermes tools that the default agent does not have.

Used when the backend drives the real Hermes agent: processes, delegation, session
search, memory, web and browser tools, each within the Hermes caps, plus a generic
structured renderer (depth 3, 8 items, 40 lines) for the other curated tools.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from acpwire.render.text import one_line, str_arg, text_of, truncate

Renderer = Callable[[str, dict[str, Any] | None, dict[str, Any]], str | None]

STRUCTURED_DEPTH = 3
STRUCTURED_ITEMS = 8
STRUCTURED_LINES = 40
NESTED_LEAF = 240
TOP_LEAF = 500
CONTENT_LIMIT = 1500


def failure_text(name: str, data: dict[str, Any]) -> str | None:
    """``"<name> failed: <error>"`` when ``data`` reports a failure, else None."""
    error = text_of(data.get("error")).strip()
    if error:
        return f"{name} failed: {error}"
    if data.get("success") is False or data.get("ok") is False:
        return f"{name} failed: {text_of(data.get('message')).strip() or 'unknown error'}"
    return None


def _empty(value: object) -> bool:
    return value is None or value == "" or value == [] or value == {}


def _value_lines(key: str, value: object, depth: int, indent: str) -> list[str]:
    label = f"{key}: " if key else ""
    if isinstance(value, dict) and depth > 0:
        lines = [f"{indent}- {key or f'{len(value)} fields'}"]
        children = [(k, v) for k, v in value.items() if not _empty(v)]
        for child_key, child in children[:STRUCTURED_ITEMS]:
            lines += _value_lines(str(child_key), child, depth - 1, indent + "  ")
        if len(children) > STRUCTURED_ITEMS:
            lines.append(f"{indent}  - ... {len(children) - STRUCTURED_ITEMS} more fields")
        return lines
    if isinstance(value, list) and depth > 0:
        lines = [f"{indent}- {label}{len(value)} item{'s' if len(value) != 1 else ''}"]
        for item in value[:STRUCTURED_ITEMS]:
            lines += _value_lines("", item, depth - 1, indent + "  ")
        if len(value) > STRUCTURED_ITEMS:
            lines.append(f"{indent}  - ... {len(value) - STRUCTURED_ITEMS} more items")
        return lines
    leaf = NESTED_LEAF if indent else TOP_LEAF
    return [f"{indent}- {label}{one_line(text_of(value), leaf)}"]


def structured(name: str, data: dict[str, Any], limit: int) -> str:
    """A compact bullet rendering of a JSON result, at most ``limit`` chars."""
    lines = [failure_text(name, data) or f"{name} result"]
    for key, value in data.items():
        if key in ("content", "success", "ok", "error") or _empty(value):
            continue
        lines += _value_lines(str(key), value, STRUCTURED_DEPTH, "")
        if len(lines) >= STRUCTURED_LINES:
            lines = [*lines[:STRUCTURED_LINES], "- ... more fields not shown"]
            break
    content = data.get("content")
    if isinstance(content, str) and content.strip():
        lines += ["", truncate(content.strip(), CONTENT_LIMIT)]
    return truncate("\n".join(lines), limit)


def _process(result: str, data: dict[str, Any] | None, args: dict[str, Any]) -> str | None:
    if data is None:
        return None
    processes = data.get("processes")
    if isinstance(processes, list):
        lines = [f"Processes: {len(processes)}"]
        for proc in processes[:20]:
            if not isinstance(proc, dict):
                lines.append(f"- {one_line(text_of(proc), NESTED_LEAF)}")
                continue
            ident = str_arg(proc, "session_id", "id") or "?"
            status = str_arg(proc, "status") or ("exited" if proc.get("exited") else "running")
            command = one_line(str_arg(proc, "command"), 120)
            lines.append(f"- {ident}: {status}" + (f" - {command}" if command else ""))
        if len(processes) > 20:
            lines.append(f"... and {len(processes) - 20} more")
        return truncate("\n".join(lines), 7000)
    action = str_arg(args, "action") or "process"
    status = str_arg(data, "status", "state") or action
    lines = [f"Process {action}: {status}"]
    for key in ("session_id", "command", "pid", "exit_code", "returncode"):
        if not _empty(data.get(key)):
            lines.append(f"- {key}: {one_line(text_of(data.get(key)), TOP_LEAF)}")
    for label, key, cap in (("Output", "output", 5000), ("Error", "error", 2000)):
        value = text_of(data.get(key)).strip()
        if value:
            lines += ["", f"{label}:", truncate(value, cap)]
    return truncate("\n".join(lines), 7000)


def _delegate(result: str, data: dict[str, Any] | None, args: dict[str, Any]) -> str | None:
    results = data.get("results") if data is not None else None
    if not isinstance(results, list):
        return None
    lines = [f"Delegation results: {len(results)} task{'s' if len(results) != 1 else ''}"]
    for index, item in enumerate(results, start=1):
        if not isinstance(item, dict):
            lines.append(f"- {one_line(text_of(item), NESTED_LEAF)}")
            continue
        lines += ["", f"Task {index}: {str_arg(item, 'status') or 'unknown'}"]
        summary, error = str_arg(item, "summary"), str_arg(item, "error")
        lines += [truncate(summary, 1200)] if summary else []
        lines += [f"Error: {truncate(error, 800)}"] if error else []
        trace = item.get("tool_trace")
        names = [
            str_arg(step, "tool") or "?"
            for step in (trace if isinstance(trace, list) else [])
            if isinstance(step, dict)
        ]
        if names:
            more = f" (+{len(names) - 12})" if len(names) > 12 else ""
            lines.append(f"Tools: {', '.join(names[:12])}{more}")
    return truncate("\n".join(lines), 8000)


def _session_search(result: str, data: dict[str, Any] | None, args: dict[str, Any]) -> str | None:
    results = data.get("results") if data is not None else None
    if not isinstance(results, list):
        return None
    query = str_arg(data or {}, "query") or str_arg(args, "query")
    lines = [f"Session search results for {query!r}" if query else "Recent sessions"]
    if not results:
        lines.append("No matching sessions found.")
    for item in results:
        if not isinstance(item, dict):
            lines.append(f"- {one_line(text_of(item), 500)}")
            continue
        title = str_arg(item, "title") or "Untitled session"
        lines.append(f"- {one_line(title, 200)} ({str_arg(item, 'session_id') or '?'})")
        summary = str_arg(item, "summary", "preview")
        if summary:
            lines.append(f"  {one_line(summary, 500)}")
    return truncate("\n".join(lines), 7000)


def _memory(result: str, data: dict[str, Any] | None, args: dict[str, Any]) -> str | None:
    if data is None:
        return None
    action = str_arg(args, "action") or "update"
    target = str_arg(data, "target") or str_arg(args, "target") or "memory"
    failure = failure_text(f"memory {action}", data)
    lines = [failure or f"Memory {action} done ({target})"]
    message = str_arg(data, "message")
    if message and not failure:
        lines.append(message)
    preview = str_arg(args, "content", "old_text")
    if preview:
        lines.append(f"Preview: {truncate(preview, 300)}")
    return "\n".join(lines)


def _web_search(result: str, data: dict[str, Any] | None, args: dict[str, Any]) -> str | None:
    inner = data.get("data") if data is not None else None
    web = inner.get("web") if isinstance(inner, dict) else (data or {}).get("web")
    if not isinstance(web, list):
        return None
    lines = [f"Web results: {len(web)}"]
    for item in web[:10]:
        if isinstance(item, dict):
            url = str_arg(item, "url")
            title = one_line(str_arg(item, "title") or url or "result", 200)
            lines.append(f"- {title}" + (f" - {url}" if url and url != title else ""))
            description = str_arg(item, "description")
            lines += [f"  {one_line(description, 300)}"] if description else []
    return truncate("\n".join(lines), 5000)


def _web_extract(result: str, data: dict[str, Any] | None, args: dict[str, Any]) -> str | None:
    """Only the failures: a successful extract is summed up by its title already."""
    results = data.get("results") if data is not None else None
    if not isinstance(results, list):
        return None
    failures = [
        f"- {str_arg(item, 'url') or '?'}\n  Error: {truncate(str_arg(item, 'error'), 500)}"
        for item in results[:10]
        if isinstance(item, dict) and str_arg(item, "error") not in ("", "None", "null")
    ]
    if not failures:
        return f"Extracted {len(results)} page{'s' if len(results) != 1 else ''}."
    return "\n".join([f"Extraction failed for {len(failures)} URL(s):", *failures])


def _browser(result: str, data: dict[str, Any] | None, args: dict[str, Any]) -> str | None:
    if data is None:
        return truncate(result, 5000)
    failure = failure_text("browser", data)
    if failure:
        return truncate(failure, 5000)
    lines = [str_arg(data, "title", "url", "status") or "Browser result"]
    url = str_arg(data, "url")
    if url and url != lines[0]:
        lines.append(url)
    text = str_arg(data, "text", "content", "snapshot", "analysis", "message")
    if text:
        lines += ["", truncate(text, 5000)]
    return truncate("\n".join(lines), 7000)


HERMES_RENDERERS: Mapping[str, Renderer] = MappingProxyType(
    {
        "process": _process,
        "delegate_task": _delegate,
        "session_search": _session_search,
        "memory": _memory,
        "web_search": _web_search,
        "web_extract": _web_extract,
        **{
            f"browser_{n}": _browser
            for n in ("navigate", "snapshot", "vision", "click", "type", "scroll", "press", "back")
        },
    }
)
