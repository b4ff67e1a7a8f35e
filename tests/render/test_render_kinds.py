"""Tool kinds, titles and locations."""

from __future__ import annotations

import pytest

from acpwire.render import TOOL_KIND_MAP, tool_kind, tool_locations, tool_title

HERMES_KINDS = {
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


def test_kind_map_is_exactly_the_hermes_map() -> None:
    assert dict(TOOL_KIND_MAP) == HERMES_KINDS


@pytest.mark.parametrize(("name", "kind"), sorted(HERMES_KINDS.items()))
def test_known_tool_kinds(name: str, kind: str) -> None:
    assert tool_kind(name) == kind


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("memory", "other"),
        ("my_plugin_tool", "other"),
        ("github__create_issue", "other"),
        ("fs__read_file", "read"),
        ("shell__terminal", "execute"),
        ("srv__web_search", "fetch"),
        ("__read_file", "other"),
        ("read_file__", "other"),
        ("", "other"),
    ],
)
def test_unknown_and_mcp_tool_kinds(name: str, kind: str) -> None:
    assert tool_kind(name) == kind


@pytest.mark.parametrize(
    ("name", "args", "title"),
    [
        ("terminal", {"command": "ls -la"}, "terminal: ls -la"),
        ("terminal", {"command": "echo " + "x" * 100}, "terminal: echo " + "x" * 72 + "..."),
        ("terminal", {"command": "a\n  b"}, "terminal: a b"),
        ("terminal", {}, "terminal"),
        ("read_file", {"path": "src/a.py"}, "read: src/a.py"),
        ("write_file", {"path": "new.txt", "content": "x"}, "write: new.txt"),
        ("patch", {"path": "a.py", "old_string": "a"}, "patch (replace): a.py"),
        (
            "patch",
            {
                "mode": "patch",
                "patch": "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n"
                "*** Add File: b.py\n+z\n*** End Patch",
            },
            "patch (patch): a.py (+1)",
        ),
        ("search_files", {"pattern": "def main"}, "search: def main"),
        ("web_search", {"query": "acp protocol"}, "web search: acp protocol"),
        (
            "web_extract",
            {"urls": ["https://a", "https://b", "https://c"]},
            "extract: https://a (+2)",
        ),
        ("web_extract", {"urls": ["https://a"]}, "extract: https://a"),
        ("process", {"action": "poll", "session_id": "p1"}, "process poll: p1"),
        ("delegate_task", {"tasks": [{"goal": "a"}, {"goal": "b"}]}, "delegate batch (2 tasks)"),
        ("delegate_task", {"goal": "g" * 100}, "delegate: " + "g" * 57 + "..."),
        ("session_search", {"query": "auth bug"}, "session search: auth bug"),
        ("session_search", {}, "recent sessions"),
        ("memory", {"action": "add", "target": "user"}, "memory add: user"),
        ("execute_code", {"code": "\nimport os\nprint(1)"}, "python: import os"),
        ("todo", {"todos": [{"id": "1"}, {"id": "2"}, {"id": "3"}]}, "todo (3 items)"),
        ("todo", {}, "todo (read)"),
        ("skill_view", {"name": "git", "file_path": "ref.md"}, "skill view (git/ref.md)"),
        ("skill_view", {"name": "git"}, "skill view (git)"),
        ("skills_list", {"category": "dev"}, "skills list (dev)"),
        ("skills_list", {}, "skills list"),
        (
            "skill_manage",
            {"action": "create", "name": "n" * 80},
            "skill create: " + "n" * 61 + "...",
        ),
        ("browser_navigate", {"url": "https://x.org"}, "navigate: https://x.org"),
        ("browser_vision", {"question": "q" * 60}, "browser vision: " + "q" * 47 + "..."),
        ("vision_analyze", {"question": "what is it"}, "analyze image: what is it"),
        ("image_generate", {"prompt": "a cat"}, "generate image: a cat"),
        ("cronjob", {"action": "remove", "job_id": "j9"}, "cron remove: j9"),
        ("github__create_issue", {"title": "x"}, "github__create_issue"),
        ("unknown_tool", {"a": 1}, "unknown_tool"),
    ],
)
def test_titles(name: str, args: dict[str, object], title: str) -> None:
    assert tool_title(name, args) == title


@pytest.mark.parametrize("args", ['{"command": "ls"}', "not json", None, 17, ["x"], {"command": 5}])
def test_titles_accept_any_args(args: object) -> None:
    title = tool_title("terminal", args)
    assert title in ("terminal: ls", "terminal", "terminal: 5")


def test_title_of_json_string_args_is_parsed_first() -> None:
    assert tool_title("read_file", '{"path": "a.py"}') == "read: a.py"


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("read_file", {"path": "src/a.py", "offset": 40}, [("/w/proj/src/a.py", 40)]),
        ("read_file", {"path": "/etc/hosts"}, [("/etc/hosts", None)]),
        ("read_file", {"path": "../x.py", "offset": 0}, [("/w/x.py", None)]),
        ("read_file", {"path": "a.py", "offset": True}, [("/w/proj/a.py", None)]),
        ("write_file", {"path": "./out/b.txt"}, [("/w/proj/out/b.txt", None)]),
        ("search_files", {"pattern": "x", "path": "src", "offset": 50}, [("/w/proj/src", None)]),
        ("some_tool", {"path": "c.py", "line": 7}, [("/w/proj/c.py", 7)]),
        (
            "patch",
            {
                "mode": "patch",
                "patch": "*** Update File: a.py\n*** Move to: b.py\n*** Delete File: c.py",
            },
            [("/w/proj/a.py", None), ("/w/proj/b.py", None), ("/w/proj/c.py", None)],
        ),
        ("terminal", {"command": "ls"}, []),
        ("read_file", {"path": ""}, []),
        ("read_file", "garbage", []),
    ],
)
def test_locations(name: str, args: object, expected: list[tuple[str, int | None]]) -> None:
    locations = tool_locations(name, args, "/w/proj")
    assert [(loc.path, loc.line) for loc in locations] == expected
