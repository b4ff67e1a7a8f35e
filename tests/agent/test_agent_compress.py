"""Context compression in the default agent: model summary, fallback, id rotation."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from acpwire.agent.embedded.compress import (
    SUMMARY_INSTRUCTIONS,
    SUMMARY_PREFIX,
    elide_tool_results,
    estimate_tokens,
    split_turns,
)
from acpwire.agent.embedded.default import DefaultAgent
from acpwire.agent.seam import Message, TurnResult
from tests.agent.recording import run_once
from tests.support.fake_llm import FakeLLM

AgentFactory = Callable[..., DefaultAgent]


def _long_history(turns: int, size: int) -> list[Message]:
    history: list[Message] = []
    for index in range(turns):
        history.append({"role": "user", "content": f"request {index} " + "u" * size})
        history.append({"role": "assistant", "content": f"answer {index} " + "a" * size})
    return history


def test_compression_summarises_and_rotates_the_id(
    llm: FakeLLM, make_agent: AgentFactory, tmp_path: Path
) -> None:
    agent = make_agent(context_window=4096)
    original_id = agent.internal_session_id
    history = _long_history(6, 1500)
    llm.push({"text": "SUMMARY-TEXT", "usage": {"prompt_tokens": 100, "completion_tokens": 10}})
    llm.push({"text": "answer", "usage": {"prompt_tokens": 50, "completion_tokens": 5}})
    result, hooks = run_once(agent, tmp_path, "next", history=history)
    assert result.stop == "end_turn" and result.final_text == "answer"
    assert agent.internal_session_id != original_id
    assert hooks.rotations == [(agent.internal_session_id, "compression")]
    summary_request, main_request = llm.requests
    assert summary_request["messages"][0]["content"] == SUMMARY_INSTRUCTIONS
    assert "tools" not in summary_request
    assert "request 0" in summary_request["messages"][1]["content"]
    assert result.messages[0]["content"] == f"{SUMMARY_PREFIX}\nSUMMARY-TEXT"
    # The last history turn and the current one are kept intact.
    assert result.messages[2:] == [
        *history[-2:],
        {"role": "user", "content": "next"},
        {"role": "assistant", "content": "answer"},
    ]
    assert main_request["messages"][1]["content"].startswith(SUMMARY_PREFIX)
    assert (result.usage.input_tokens, result.usage.output_tokens) == (150, 15)


def test_compression_falls_back_to_a_mechanical_summary(
    llm: FakeLLM, make_agent: AgentFactory, tmp_path: Path
) -> None:
    agent = make_agent(context_window=4096)
    llm.push({"status": 500})
    llm.push({"text": "answer"})
    result, hooks = run_once(agent, tmp_path, "next", history=_long_history(6, 1500))
    assert result.stop == "end_turn"
    assert len(hooks.rotations) == 1
    assert "User requests so far:" in result.messages[0]["content"]
    assert "request 0" in result.messages[0]["content"]


def test_public_compress_and_context_usage(llm: FakeLLM, make_agent: AgentFactory) -> None:
    agent = make_agent(context_window=8192)
    history = _long_history(3, 100)
    used, window = agent.context_usage(history)
    assert window == 8192 and 0 < used < window
    first_id = agent.internal_session_id
    assert agent.compress(history, force=False) == history  # below the threshold
    assert agent.internal_session_id == first_id
    llm.push({"text": "short summary"})
    compressed = agent.compress(history, force=True)
    assert compressed[0]["content"] == f"{SUMMARY_PREFIX}\nshort summary"
    assert compressed[2:] == history[-2:]
    assert agent.internal_session_id != first_id


def test_split_turns_estimate_and_elision() -> None:
    messages: list[Message] = [
        {"role": "user", "content": "a"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "1"}, {"id": "2"}, {"id": "3"}],
        },
        {"role": "tool", "tool_call_id": "1", "content": "x" * 400},
        {"role": "tool", "tool_call_id": "2", "content": "y" * 400},
        {"role": "tool", "tool_call_id": "3", "content": "z"},
        {"role": "user", "content": "b"},
    ]
    assert [len(turn) for turn in split_turns(messages)] == [5, 1]
    before = estimate_tokens(messages)
    assert before > 200
    assert elide_tool_results(messages, keep_last=1) == 2
    assert messages[4]["content"] == "z"
    assert estimate_tokens(messages) < before - 150


def test_a_cancel_during_compression_does_not_repeat_the_last_reply(
    llm: FakeLLM, make_agent: AgentFactory, tmp_path: Path
) -> None:
    """The reply before the compression is in the history once: a cancel while the
    summary is being written must not append it again as the "partial" reply."""
    agent = make_agent(context_window=2048)  # the read's result tips it over
    (tmp_path / "big.txt").write_text("b" * 20_000)
    read = {"id": "c1", "name": "read_file", "arguments": {"path": "big.txt"}}
    llm.push({"text": "Let me look.", "tool_calls": [read]})
    llm.push({"text": "SUMMARY", "initial_delay": 3.0})
    box: list[TurnResult] = []
    worker = threading.Thread(
        target=lambda: box.append(run_once(agent, tmp_path, "go", history=_long_history(3, 10))[0])
    )
    worker.start()
    assert llm.wait_for_requests(2, timeout=10)
    assert llm.requests[1]["messages"][0]["content"] == SUMMARY_INSTRUCTIONS  # summarising
    agent.interrupt()
    worker.join(10)
    (result,) = box
    assert result.stop == "cancelled"
    replies = [
        m
        for m in result.messages
        if m.get("role") == "assistant" and m.get("content") == "Let me look."
    ]
    assert len(replies) == 1
