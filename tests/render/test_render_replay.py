"""Replaying a stored history as session updates."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from acp_v1.models import (
    ContentBlockText,
    SessionUpdateAgentMessageChunk,
    SessionUpdatePlan,
    SessionUpdateToolCall,
    SessionUpdateToolCallUpdate,
    SessionUpdateUserMessageChunk,
    ToolCallContentContent,
)
from acpwire.agent.seam import Message
from acpwire.render import SUMMARY_KEY, ReplayUpdate, content_text, replay_updates

RoundTrip = Callable[[BaseModel], dict[str, object]]
CWD = "/w/proj"

TODOS = [
    {"id": "1", "content": "reproduce", "status": "completed"},
    {"id": "2", "content": "fix", "status": "in_progress"},
    {"id": "3", "content": "old idea", "status": "cancelled"},
]

HISTORY: list[Message] = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "- user asked to fix tests", SUMMARY_KEY: True},
    {"role": "assistant", "content": "Understood."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Fix the failing test"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            {"type": "text", "text": "   "},
            {"type": "text", "text": "in src/app.py"},
        ],
    },
    {
        "role": "assistant",
        "content": None,
        "reasoning_content": "Look at the file first.",
        "tool_calls": [
            {
                "id": "call_read",
                "type": "function",
                "function": {
                    "name": "read_file",
                    "arguments": '{"path": "src/app.py", "offset": 10}',
                },
            },
            {
                "id": "call_term",
                "type": "function",
                "function": {"name": "terminal", "arguments": '{"command": "pytest -q"}'},
            },
            {"type": "function", "function": {"name": "terminal", "arguments": "{}"}},
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "call_read",
        "content": "    10|def f():\n    11|    return 1",
    },
    {
        "role": "tool",
        "tool_call_id": "call_term",
        "content": json.dumps({"output": "1 failed", "exit_code": 1}),
    },
    {
        "role": "assistant",
        "content": "I will plan the fix.",
        "reasoning": "Make a plan.",
        "tool_calls": [
            {"id": "call_todo", "function": {"name": "todo", "arguments": {"todos": TODOS}}},
            {
                "call_id": "call_patch",
                "function": {
                    "name": "patch",
                    "arguments": '{"path": "src/app.py", "old_string": "1", "new_string": "2"}',
                },
            },
            {"id": "call_bad", "function": {"name": "srv__query", "arguments": "{not json"}},
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "call_todo",
        "content": json.dumps({"todos": TODOS}) + "\n\n[Hint: keep the list current]",
    },
    {"role": "tool", "tool_call_id": "call_bad", "content": "rows: 3"},
    {"role": "assistant", "content": [{"type": "text", "text": "Done for now."}]},
    {"role": "developer", "content": "ignored"},
]


def _text(update: ReplayUpdate) -> str:
    if isinstance(update, SessionUpdateToolCall | SessionUpdateToolCallUpdate):
        (item,) = update.content or []
        assert isinstance(item, ToolCallContentContent)
        block = item.content
    else:
        assert not isinstance(update, SessionUpdatePlan)
        block = update.content
    assert isinstance(block, ContentBlockText)
    return block.text


def test_realistic_history_replays_in_order(roundtrip: RoundTrip) -> None:
    updates = replay_updates(HISTORY, cwd=CWD)
    shape = [
        (type(u).__name__, getattr(u, "tool_call_id", None), getattr(u, "status", None))
        for u in updates
    ]
    assert shape == [
        ("SessionUpdateAgentMessageChunk", None, None),  # the summary
        ("SessionUpdateAgentMessageChunk", None, None),  # its acknowledgement
        ("SessionUpdateUserMessageChunk", None, None),
        ("SessionUpdateAgentThoughtChunk", None, None),
        ("SessionUpdateToolCall", "call_read", "in_progress"),
        ("SessionUpdateToolCall", "call_term", "in_progress"),
        ("SessionUpdateToolCallUpdate", "call_read", "completed"),
        ("SessionUpdateToolCallUpdate", "call_term", "failed"),
        ("SessionUpdateAgentThoughtChunk", None, None),
        ("SessionUpdateAgentMessageChunk", None, None),
        ("SessionUpdateToolCall", "call_todo", "in_progress"),
        ("SessionUpdateToolCall", "call_patch", "pending"),
        ("SessionUpdateToolCall", "call_bad", "in_progress"),
        ("SessionUpdateToolCallUpdate", "call_todo", "completed"),
        ("SessionUpdatePlan", None, None),
        ("SessionUpdateToolCallUpdate", "call_bad", "completed"),
        ("SessionUpdateAgentMessageChunk", None, None),
        ("SessionUpdateToolCallUpdate", "call_patch", "failed"),
    ]
    for update in updates:
        roundtrip(update)

    assert _text(updates[0]) == "[Earlier conversation compressed]\n- user asked to fix tests"
    assert _text(updates[2]) == "Fix the failing test\n[image]\nin src/app.py"
    assert _text(updates[3]) == "Look at the file first."
    read_start = updates[4]
    assert isinstance(read_start, SessionUpdateToolCall)
    assert read_start.title == "read: src/app.py"
    assert [(loc.path, loc.line) for loc in read_start.locations or []] == [
        ("/w/proj/src/app.py", 10)
    ]
    assert _text(updates[5]) == "$ pytest -q"
    assert _text(updates[6]).startswith("Read src/app.py (from line 10)\n\n```\n    10|def f():")
    assert _text(updates[7]) == "```\n1 failed\n```\n\nExit code: 1"
    assert _text(updates[8]) == "Make a plan."
    assert _text(updates[9]) == "I will plan the fix."
    bad_start = updates[12]
    assert isinstance(bad_start, SessionUpdateToolCall)
    assert bad_start.raw_input == {"raw": "{not json"}
    plan = updates[14]
    assert isinstance(plan, SessionUpdatePlan)
    assert [(e.content, e.status) for e in plan.entries] == [
        ("reproduce", "completed"),
        ("fix", "in_progress"),
        ("[cancelled] old idea", "completed"),
    ]
    assert _text(updates[16]) == "Done for now."
    assert _text(updates[17]) == "no result recorded"


def test_every_started_call_is_closed_exactly_once() -> None:
    updates = replay_updates(HISTORY, cwd=CWD)
    started = [u.tool_call_id for u in updates if isinstance(u, SessionUpdateToolCall)]
    closed = [u.tool_call_id for u in updates if isinstance(u, SessionUpdateToolCallUpdate)]
    assert sorted(started) == sorted(closed)
    assert len(set(closed)) == len(closed)
    assert all(
        u.status in ("completed", "failed")
        for u in updates
        if isinstance(u, SessionUpdateToolCallUpdate)
    )


def test_orphan_result_gets_a_start_of_its_own() -> None:
    history: list[Message] = [
        {"role": "tool", "tool_call_id": "lost", "name": "terminal", "content": "x"}
    ]
    updates = replay_updates(history, cwd=CWD)
    assert [(type(u).__name__, getattr(u, "status", None)) for u in updates] == [
        ("SessionUpdateToolCall", "in_progress"),
        ("SessionUpdateToolCallUpdate", "completed"),
    ]
    ids = [
        u.tool_call_id
        for u in updates
        if isinstance(u, SessionUpdateToolCall | SessionUpdateToolCallUpdate)
    ]
    assert ids == ["lost", "lost"]


def test_reused_call_id_closes_the_earlier_call_first() -> None:
    call = {"id": "dup", "function": {"name": "terminal", "arguments": '{"command": "ls"}'}}
    history: list[Message] = [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "dup", "content": '{"output": "", "exit_code": 0}'},
    ]
    updates = replay_updates(history, cwd=CWD)
    assert [(type(u).__name__, getattr(u, "status", None)) for u in updates] == [
        ("SessionUpdateToolCall", "in_progress"),
        ("SessionUpdateToolCallUpdate", "failed"),
        ("SessionUpdateToolCall", "in_progress"),
        ("SessionUpdateToolCallUpdate", "completed"),
    ]


def test_a_finished_call_copied_by_a_compaction_is_shown_once() -> None:
    """A transcript holds a compaction's rewritten copy of calls it kept (Hermes merges
    its summary into the first kept assistant message): each call is shown once, and
    the copy's text (the summary) still is."""
    call = {"id": "c1", "function": {"name": "terminal", "arguments": '{"command": "ls"}'}}
    result = {"role": "tool", "tool_call_id": "c1", "content": '{"output": "a", "exit_code": 0}'}
    history: list[Message] = [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        result,
        {"role": "assistant", "content": "[summary of earlier turns]", "tool_calls": [call]},
        result,
    ]
    updates = replay_updates(history, cwd=CWD)
    assert [(type(u).__name__, getattr(u, "status", None)) for u in updates] == [
        ("SessionUpdateToolCall", "in_progress"),
        ("SessionUpdateToolCallUpdate", "completed"),
        ("SessionUpdateAgentMessageChunk", None),
    ]
    assert _text(updates[2]) == "[summary of earlier turns]"


def test_failed_todo_result_gives_no_plan() -> None:
    history: list[Message] = [
        {
            "role": "assistant",
            "tool_calls": [{"id": "t", "function": {"name": "todo", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "t", "content": '{"error": "todos[0] needs an id"}'},
    ]
    updates = replay_updates(history, cwd=CWD)
    assert [type(u).__name__ for u in updates] == [
        "SessionUpdateToolCall",
        "SessionUpdateToolCallUpdate",
    ]


@pytest.mark.parametrize(
    ("content", "text"),
    [
        ("plain", "plain"),
        (None, ""),
        ([{"type": "text", "content": "legacy part"}], "legacy part"),
        ([{"text": "no type"}, "bare string"], "no type\nbare string"),
        ([{"type": "input_audio", "input_audio": {}}], "[input_audio]"),
        ([{"type": "image", "source": {}}], "[image]"),
        ([{"type": "text", "text": ""}, {"weird": 1}], ""),
        ({"unexpected": "dict"}, '{"unexpected": "dict"}'),
    ],
)
def test_content_text(content: Any, text: str) -> None:
    assert content_text(content) == text


def test_blank_and_odd_messages_are_skipped_without_error() -> None:
    history: list[Any] = [
        {"role": "user", "content": "   "},
        {"role": "assistant", "content": "", "reasoning_content": ""},
        {"role": "assistant", "tool_calls": "not a list"},
        {"role": "assistant", "tool_calls": ["junk", {"function": "junk", "id": 5}]},
        "not a message",
        {"no": "role"},
        {"role": "system", "content": "sys", SUMMARY_KEY: False},
    ]
    updates = replay_updates(history, cwd=CWD)
    # Only the call with id 5 (a non-dict function, so an unnamed tool) survives.
    assert [(type(u).__name__, getattr(u, "tool_call_id", None)) for u in updates] == [
        ("SessionUpdateToolCall", "5"),
        ("SessionUpdateToolCallUpdate", "5"),
    ]


def test_summary_with_system_role_and_no_text() -> None:
    updates = replay_updates([{"role": "system", "content": "", SUMMARY_KEY: True}], cwd=CWD)
    (update,) = updates
    assert isinstance(update, SessionUpdateAgentMessageChunk)
    assert _text(update) == "[Earlier conversation compressed]"


def test_reasoning_prefers_reasoning_content() -> None:
    updates = replay_updates(
        [{"role": "assistant", "content": "hi", "reasoning_content": "A", "reasoning": "B"}],
        cwd=CWD,
    )
    assert [type(u).__name__ for u in updates] == [
        "SessionUpdateAgentThoughtChunk",
        "SessionUpdateAgentMessageChunk",
    ]
    assert _text(updates[0]) == "A"
    assert not any(isinstance(u, SessionUpdateUserMessageChunk) for u in updates)


def test_a_reused_call_id_with_other_content_is_its_own_call() -> None:
    """Some models reuse ids (``call_0`` every turn, or a hash of name and arguments):
    a call that differs in arguments, or in result, is shown again."""

    def call(command: str) -> dict[str, Any]:
        return {
            "id": "call_0",
            "function": {"name": "terminal", "arguments": json.dumps({"command": command})},
        }

    def result(output: str) -> Message:
        return {
            "role": "tool",
            "tool_call_id": "call_0",
            "content": json.dumps({"output": output, "exit_code": 0}),
        }

    history: list[Message] = [
        {"role": "assistant", "content": "", "tool_calls": [call("ls")]},
        result("a"),
        {"role": "assistant", "content": "", "tool_calls": [call("pwd")]},  # other arguments
        result("/w"),
        {"role": "assistant", "content": "", "tool_calls": [call("ls")]},  # same call, ran again
        result("a b"),
    ]
    updates = replay_updates(history, cwd=CWD)
    kinds = [(type(u).__name__, getattr(u, "status", None)) for u in updates]
    assert (
        kinds
        == [
            ("SessionUpdateToolCall", "in_progress"),
            ("SessionUpdateToolCallUpdate", "completed"),
        ]
        * 3
    )
    last = updates[-1]
    assert isinstance(last, SessionUpdateToolCallUpdate)
    assert "a b" in str(last.content)
