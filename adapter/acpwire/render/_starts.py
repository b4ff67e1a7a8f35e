"""The content of a ``tool_call`` (the start of a call), per tool.

What is shown while a call runs: the command of ``terminal``, the diffs of an edit
whose changes are known, a short preview of the arguments otherwise. ``read_file``
and ``web_extract`` show nothing, because Zed renders empty content as an empty
"Output" box.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

from acpwire.agent.seam import EditProposal
from acpwire.render._content import Content, diff_content, text_content
from acpwire.render._paths import absolute, patch_paths
from acpwire.render.text import fenced_within, one_line, pretty_json, str_arg, text_of, truncate

EDIT_TOOLS: Final = frozenset({"write_file", "patch", "skill_manage"})
"""Tools that change files (their starts and ends show what changes)."""
GATED_EDIT_TOOLS: Final = frozenset({"write_file", "patch"})
"""Edit tools that ask for approval: their start is ``pending`` until the diffs are known.
(Hermes' ``skill_manage`` changes its own skill files without asking.)"""

SILENT_START_TOOLS: Final = frozenset({"read_file", "web_extract"})
ARGS_PREVIEW = 1200
TODO_PREVIEW = 8
DELEGATE_PREVIEW = 8
COMMAND_PREVIEW = 5000


def start_content(
    name: str,
    args: dict[str, Any],
    cwd: str,
    edit_preview: list[EditProposal] | None,
) -> list[Content] | None:
    """The content of the start of ``name``; None when nothing is worth showing."""
    if name in EDIT_TOOLS:
        return _edit_start(name, args, cwd, edit_preview)
    if name in SILENT_START_TOOLS:
        return None
    render = _RENDERERS.get(name)
    text = render(args) if render is not None else ""
    if not text and args:
        text = pretty_json(args, ARGS_PREVIEW)
    return [text_content(text)] if text else None


def _edit_start(
    name: str, args: dict[str, Any], cwd: str, edit_preview: list[EditProposal] | None
) -> list[Content]:
    if edit_preview is not None:
        if not edit_preview:
            return [text_content("No file changes.")]
        return [diff_content(p, absolute(p.path, cwd)) for p in edit_preview]
    if name == "write_file":
        path = str_arg(args, "path") or "(no path given)"
        return [text_content(f"Preparing write to {path}. Approval prompt shows the diff.")]
    if name == "patch":
        mode = str_arg(args, "mode") or "replace"
        paths = [str_arg(args, "path")] if str_arg(args, "path") else patch_paths(args)
        target = ", ".join(paths) or "(no path given)"
        return [
            text_content(f"Preparing {mode} edit for {target}. Approval prompt shows the diff.")
        ]
    return _skill_start(args)


def _skill_start(args: dict[str, Any]) -> list[Content]:
    """What ``skill_manage`` is about to write, as hermes-acp shows it: a diff against the
    skill's file (``skills/<name>/<file>``, under Hermes' home) where the arguments say."""
    action = str_arg(args, "action") or "edit"
    skill = str_arg(args, "name") or "(unnamed skill)"
    file_path = str_arg(args, "file_path") or "SKILL.md"
    path = f"skills/{skill}/{file_path}"
    source = {"patch": "new_string", "create": "content", "edit": "content"}.get(
        action, "file_content" if action == "write_file" else ""
    )
    new = args.get(source) if source else None
    if isinstance(new, str):
        old = (text_of(args.get("old_string")) or None) if action == "patch" else None
        return [diff_content(EditProposal(path, old, new), path)]
    if action == "delete":
        return [text_content(f"Removing skill {skill!r}.")]
    if action == "remove_file":
        return [text_content(f"Removing {file_path} from skill {skill!r}.")]
    return [text_content(f"Skill {action}: {skill} ({file_path}).")]


def _terminal(args: dict[str, Any]) -> str:
    command = args.get("command")
    if not isinstance(command, str) or not command.strip():
        return ""
    return truncate(f"$ {command}", COMMAND_PREVIEW)


def _search(args: dict[str, Any]) -> str:
    pattern = text_of(args.get("pattern"))
    target = str_arg(args, "target") or "content"
    path = str_arg(args, "path") or "."
    glob = str_arg(args, "file_glob")
    where = f" in {path}" + (f" (files matching {glob})" if glob else "")
    return truncate(f"Searching for '{pattern}' ({target}){where}", ARGS_PREVIEW)


def _todo(args: dict[str, Any]) -> str:
    todos = args.get("todos")
    if not isinstance(todos, list):
        return "Reading the todo list."
    verb = "Updating" if args.get("merge") is True else "Setting"
    lines = [f"{verb} {len(todos)} todo item{'s' if len(todos) != 1 else ''}:"]
    for item in todos[:TODO_PREVIEW]:
        if isinstance(item, dict):
            status = str_arg(item, "status") or "pending"
            content = str_arg(item, "content") or str_arg(item, "id") or "?"
            lines.append(f"- [{status}] {one_line(content, 200)}")
        else:
            lines.append(f"- {one_line(text_of(item), 200)}")
    if len(todos) > TODO_PREVIEW:
        lines.append(f"... and {len(todos) - TODO_PREVIEW} more")
    return "\n".join(lines)


def _code(args: dict[str, Any]) -> str:
    code = args.get("code")
    if not isinstance(code, str) or not code.strip():
        return ""
    return fenced_within(code, ARGS_PREVIEW, "python")


def _delegate(args: dict[str, Any]) -> str:
    tasks = args.get("tasks")
    if isinstance(tasks, list) and tasks:
        lines = [f"Delegating {len(tasks)} tasks:"]
        for task in tasks[:DELEGATE_PREVIEW]:
            goal = str_arg(task, "goal") if isinstance(task, dict) else text_of(task)
            lines.append(f"- {one_line(goal or '?', 160)}")
        if len(tasks) > DELEGATE_PREVIEW:
            lines.append(f"... and {len(tasks) - DELEGATE_PREVIEW} more")
        return "\n".join(lines)
    goal = str_arg(args, "goal")
    return f"Delegating: {truncate(goal, 800)}" if goal else ""


def _process(args: dict[str, Any]) -> str:
    return pretty_json(args, 500) if args else ""


def _memory(args: dict[str, Any]) -> str:
    head = " ".join(part for part in (str_arg(args, "action"), str_arg(args, "target")) if part)
    body = str_arg(args, "content", "old_text", "query")
    if not body:
        return head
    return truncate(f"{head}\n{body}" if head else body, 500)


_RENDERERS: Mapping[str, Callable[[dict[str, Any]], str]] = MappingProxyType(
    {
        "terminal": _terminal,
        "search_files": _search,
        "todo": _todo,
        "execute_code": _code,
        "delegate_task": _delegate,
        "process": _process,
        "memory": _memory,
    }
)
