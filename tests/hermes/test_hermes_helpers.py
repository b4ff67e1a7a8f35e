"""The pieces of :mod:`acpwire.hermes` that need no Hermes: argument parsing, tool ids,
usage deltas, todo plans, stop reasons and turn results."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from acpwire.agent.config import ConfigError
from acpwire.agent.seam import TurnUsage
from acpwire.hermes.factory import HermesAgentFactory
from acpwire.hermes.results import plan_items, stop_kind, tool_args, turn_result, usage_delta
from acpwire.hermes.turn import CallIds

TC_ID = re.compile(r"^tc-[0-9a-f]{12}$")


def test_tool_args_parses_json_objects_and_keeps_anything_else_under_raw() -> None:
    assert tool_args({"path": "a"}) == {"path": "a"}
    assert tool_args('{"path": "a", "n": 2}') == {"path": "a", "n": 2}
    assert tool_args("[1, 2]") == {"raw": [1, 2]}
    assert tool_args('{"path": ') == {"raw": '{"path": '}
    assert tool_args(None) == {}
    assert tool_args(42) == {"raw": 42}


def test_usage_delta_is_the_turns_share_of_the_session_counters() -> None:
    before = {"prompt_tokens": 11, "completion_tokens": 7, "reasoning_tokens": 0}
    after = {"prompt_tokens": 40, "completion_tokens": 20, "reasoning_tokens": 5}
    assert usage_delta(before, after) == TurnUsage(29, 13, 5, 0)


def test_usage_delta_never_goes_negative_when_counters_were_reset() -> None:
    before = {"prompt_tokens": 100, "completion_tokens": 50, "cache_read_tokens": 30}
    after = {"prompt_tokens": 12, "completion_tokens": 3, "cache_read_tokens": 0}
    assert usage_delta(before, after) == TurnUsage(0, 0, 0, 0)


def test_plan_items_read_the_todo_result_and_ignore_a_trailing_hint() -> None:
    result = json.dumps(
        {
            "todos": [
                {"id": "a", "content": "write hello", "status": "in_progress"},
                {"id": "b", "content": "old step", "status": "cancelled"},
                {"content": "no id", "status": "weird"},
                {"id": "d", "status": "pending"},
                "not an object",
            ]
        }
    )
    items = plan_items(result + "\n\nRemember to update the list.")
    assert items == [
        {"id": "a", "content": "write hello", "status": "in_progress"},
        {"id": "b", "content": "old step", "status": "cancelled"},
        {"id": "3", "content": "no id", "status": "pending"},
    ]


def test_plan_items_is_none_without_a_todo_list_and_empty_for_an_empty_one() -> None:
    assert plan_items("Error: the todo store is locked") is None
    assert plan_items('{"success": true}') is None
    assert plan_items('{"todos": []}') == []


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ({"interrupted": True, "failed": True}, "cancelled"),
        ({"failed": True}, "error"),
        ({"turn_exit_reason": "budget_exhausted"}, "max_turn_requests"),
        ({"turn_exit_reason": "text_response(finish_reason=length)"}, "max_tokens"),
        ({"turn_exit_reason": "text_response(finish_reason=stop)"}, "end_turn"),
        ({}, "end_turn"),
    ],
)
def test_stop_kind(result: dict[str, Any], expected: str) -> None:
    assert stop_kind(result) == expected


def test_turn_result_of_a_normal_turn() -> None:
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    result = turn_result(
        {"final_response": "yo", "messages": messages, "pending_steer": "late"},
        "hi",
        [],
        streamed=True,
        usage=TurnUsage(3, 4),
    )
    assert (result.final_text, result.stop, result.streamed) == ("yo", "end_turn", True)
    assert result.messages == messages and result.messages is not messages
    assert result.pending_steer == "late"
    assert result.usage.total_tokens == 7


def test_turn_result_tolerates_a_none_final_response_and_resends_transformed_text() -> None:
    none = turn_result(
        {"final_response": None, "messages": []}, "x", [], streamed=True, usage=TurnUsage()
    )
    assert none.final_text is None and none.stop == "end_turn"
    transformed = turn_result(
        {"final_response": "rewritten", "response_transformed": True, "messages": []},
        "x",
        [],
        streamed=True,
        usage=TurnUsage(),
    )
    assert transformed.final_text == "rewritten" and transformed.streamed is False


def test_turn_result_of_an_interrupted_turn_drops_hermes_interrupt_notice() -> None:
    result = turn_result(
        {
            "final_response": "Operation interrupted: waiting for model response (3s)",
            "interrupted": True,
            "messages": [{"role": "user", "content": "x"}],
        },
        "x",
        [],
        streamed=False,
        usage=TurnUsage(),
    )
    assert result.stop == "cancelled" and result.final_text is None


def test_turn_result_of_a_failed_turn_reports_the_error_and_keeps_the_prompt() -> None:
    history = [{"role": "user", "content": "before"}, {"role": "assistant", "content": "ok"}]
    result = turn_result(
        {"failed": True, "error": "HTTP 400: bad request", "final_response": "Sorry"},
        "now",
        history,
        streamed=False,
        usage=TurnUsage(),
    )
    assert result.stop == "error" and result.error == "HTTP 400: bad request"
    assert result.final_text is None
    assert result.messages == [*history, {"role": "user", "content": "now"}]


def test_call_ids_keep_hermes_ids_and_replace_repeated_ones() -> None:
    used: set[str] = set()
    first = CallIds(used)
    assert first.start("call_0", "read_file", {"path": "a"}) == "call_0"
    assert first.end("call_0", "read_file") is not None
    second = CallIds(used)  # the next turn of the same session: a scripted model reuses ids
    fresh = second.start("call_0", "read_file", {"path": "b"})
    assert TC_ID.match(fresh)
    found = second.end("call_0", "read_file")
    assert found is not None and found[:3] == (fresh, "read_file", {"path": "b"})
    assert found[3] >= 0.0
    assert second.end("call_0", "read_file") is None


def test_call_ids_match_calls_without_ids_by_name_oldest_first() -> None:
    calls = CallIds(set())
    a = calls.start("", "terminal", {"command": "a"})
    b = calls.start("", "terminal", {"command": "b"})
    assert TC_ID.match(a) and TC_ID.match(b) and a != b
    assert calls.end("", "read_file") is None
    first, second = calls.end("", "terminal"), calls.end("", "terminal")
    assert first is not None and second is not None
    assert (first[0], second[0]) == (a, b)


def test_call_ids_give_the_editor_id_of_an_open_call() -> None:
    calls = CallIds({"call_0"})
    reused = calls.start("call_0", "write_file", {"path": "one.txt"})
    kept = calls.start("c2", "terminal", {"command": "ls"})
    assert TC_ID.match(reused) and kept == "c2"
    assert calls.editor_id("call_0") == reused  # what the boundary asks under
    assert calls.editor_id("c2") == "c2"
    assert calls.editor_id("") is None and calls.editor_id("unknown") is None
    calls.end("c2", "terminal")
    assert calls.editor_id("c2") is None
    assert [cid for cid, _, _ in calls.remaining()] == [reused]
    assert calls.remaining() == []


def test_factory_without_hermes_reports_the_problem_and_refuses_to_build() -> None:
    factory = HermesAgentFactory()
    assert factory.configured() is False
    assert factory.provider == "none"
    assert factory.problem == "hermes-agent is not importable here (No module named 'hermes_cli')"
    assert factory.available_models() == []
    with pytest.raises(ConfigError, match="hermes-agent is not importable"):
        factory.create("s1", "/tmp", None)


def test_compaction_summaries_are_told_from_real_turns_as_hermes_marks_them() -> None:
    from acpwire.hermes.summaries import summary_meta

    standalone = "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted..."
    merged = "the real reply\n\n[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]\n\nsummary"
    assert summary_meta({"role": "user"}, standalone) == {"hermes": {"compactionSummary": True}}
    assert summary_meta({"role": "assistant"}, merged) == {
        "hermes": {"containsCompactionSummary": True}
    }
    flagged = {"role": "assistant", "_compressed_summary": True}
    assert summary_meta(flagged, "drifted text") == {"hermes": {"compactionSummary": True}}
    assert summary_meta({"role": "user"}, "an ordinary turn") is None
