"""The default agent's chat loop, end to end against the real fake model server."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acpwire.agent.embedded.default import DefaultAgent
from acpwire.agent.seam import Message, TurnResult
from tests.agent.recording import RecordingHooks, run_once
from tests.support.fake_llm import FakeLLM

AgentFactory = Callable[..., DefaultAgent]
BUILTIN_TOOLS = ["read_file", "write_file", "patch", "search_files", "terminal", "todo"]


def _in_thread(
    agent: DefaultAgent, cwd: Path, hooks: RecordingHooks
) -> tuple[threading.Thread, list[TurnResult]]:
    results: list[TurnResult] = []
    thread = threading.Thread(
        target=lambda: results.append(run_once(agent, cwd, hooks=hooks)[0]), daemon=True
    )
    thread.start()
    return thread, results


def _call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments}


def _assert_paired(hooks: RecordingHooks) -> None:
    assert [s.call_id for s in hooks.starts] == [e.call_id for e in hooks.ends]
    assert len({s.call_id for s in hooks.starts}) == len(hooks.starts)


def _assert_history_valid(messages: list[Message]) -> None:
    asked = [
        c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []
    ]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert asked == answered


def test_streamed_text_and_reasoning(
    llm: FakeLLM, make_agent: AgentFactory, tmp_path: Path
) -> None:
    llm.push(
        {
            "text": "Hello from the model",
            "reasoning": "let me think",
            "usage": {"prompt_tokens": 20, "completion_tokens": 5},
        }
    )
    agent = make_agent()
    result, hooks = run_once(agent, tmp_path)
    assert result.stop == "end_turn" and result.error is None
    assert result.final_text == "Hello from the model" == hooks.joined_text
    assert len(hooks.text) == 3
    assert "".join(hooks.thoughts) == "let me think"
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.total_tokens) == (
        20,
        5,
        25,
    )
    assert result.messages == [
        {"role": "user", "content": "hello"},
        {
            "role": "assistant",
            "content": "Hello from the model",
            "reasoning_content": "let me think",
        },
    ]
    request = llm.requests[0]
    assert request["model"] == "fake-model"
    assert request["messages"][0]["role"] == "system"
    assert str(tmp_path) in request["messages"][0]["content"]
    assert [t["function"]["name"] for t in request["tools"]] == BUILTIN_TOOLS
    # The next turn sends the history without the stored reasoning.
    second, _ = run_once(agent, tmp_path, "again", history=result.messages)
    assert second.final_text == "You said: again"
    assert llm.requests[1]["messages"][2] == {
        "role": "assistant",
        "content": "Hello from the model",
    }
    assert second.usage.input_tokens == 0  # usage is per turn


def test_write_file_turn_approved(llm: FakeLLM, make_agent: AgentFactory, tmp_path: Path) -> None:
    llm.push(
        {"tool_calls": [_call("call_w", "write_file", {"path": "hello.txt", "content": "hi\n"})]}
    )
    llm.push({"text": "Done."})
    result, hooks = run_once(make_agent(), tmp_path, "write a file")
    assert (tmp_path / "hello.txt").read_text() == "hi\n"
    assert result.stop == "end_turn" and result.final_text == "Done."
    assert [(s.call_id, s.name, s.args) for s in hooks.starts] == [
        ("call_w", "write_file", {"path": "hello.txt", "content": "hi\n"})
    ]
    _assert_paired(hooks)
    assert not hooks.ends[0].failed
    assert hooks.edit_requests[0][0] == "call_w"
    assert [m["role"] for m in result.messages] == ["user", "assistant", "tool", "assistant"]
    tool_message = llm.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "call_w"
    assert json.loads(tool_message["content"])["created"] is True


def test_write_file_turn_denied(llm: FakeLLM, make_agent: AgentFactory, tmp_path: Path) -> None:
    (tmp_path / "hello.txt").write_text("keep\n")
    llm.push(
        {"tool_calls": [_call("call_w", "write_file", {"path": "hello.txt", "content": "hi\n"})]}
    )
    llm.push({"text": "Understood."})
    result, hooks = run_once(make_agent(), tmp_path, hooks=RecordingHooks(approve_edits=False))
    assert (tmp_path / "hello.txt").read_text() == "keep\n"
    assert hooks.ends[0].failed
    assert "Edit denied by the user" in hooks.ends[0].result
    assert result.stop == "end_turn"


def test_unknown_tool_and_malformed_arguments_still_pair(
    llm: FakeLLM, make_agent: AgentFactory, tmp_path: Path
) -> None:
    llm.push(
        {
            "tool_calls": [
                _call("u1", "fly_to_moon", {}),
                _call("m1", "read_file", '{"path": '),
                _call("a1", "read_file", ["not", "an", "object"]),
                _call("x1", "read_file", {"path": "a", "colour": "red"}),
            ]
        }
    )
    llm.push({"text": "sorry"})
    result, hooks = run_once(make_agent(), tmp_path)
    _assert_paired(hooks)
    assert [e.call_id for e in hooks.ends] == ["u1", "m1", "a1", "x1"]
    assert all(e.failed for e in hooks.ends)
    assert "unknown tool 'fly_to_moon'" in hooks.ends[0].result
    assert "invalid JSON arguments" in hooks.ends[1].result
    assert hooks.starts[1].args == {"raw_arguments": '{"path": '}
    assert "must be a JSON object" in hooks.ends[2].result
    assert "unknown argument(s) for read_file: colour" in hooks.ends[3].result
    stored = result.messages[1]["tool_calls"]
    assert stored[1]["function"]["arguments"] == "{}"  # malformed JSON is not sent back
    _assert_history_valid(result.messages)
    assert result.stop == "end_turn"


def test_max_iterations_stops_with_max_turn_requests(
    llm: FakeLLM, make_agent: AgentFactory, tmp_path: Path
) -> None:
    llm.add_rule({"match": "loop", "tool_calls": [_call("t", "todo", {})]})
    result, hooks = run_once(make_agent(max_iterations=3), tmp_path, "loop forever")
    assert result.stop == "max_turn_requests"
    assert len(llm.requests) == 3
    # The server reuses the id "t"; the agent keeps ids unique.
    assert [s.call_id for s in hooks.starts] == ["t", "t_2", "t_3"]
    _assert_paired(hooks)
    _assert_history_valid(result.messages)


def test_length_and_content_filter_stop_reasons(
    llm: FakeLLM, make_agent: AgentFactory, tmp_path: Path
) -> None:
    agent = make_agent()
    llm.push({"text": "cut sh", "finish_reason": "length"})
    result, _ = run_once(agent, tmp_path)
    assert (result.stop, result.final_text) == ("max_tokens", "cut sh")
    llm.push({"text": "", "finish_reason": "content_filter"})
    assert run_once(agent, tmp_path)[0].stop == "refusal"
    # Tool calls in a truncated reply are reported as failed and not run.
    llm.push(
        {
            "tool_calls": [_call("w", "write_file", {"path": "x.txt", "content": "x"})],
            "finish_reason": "length",
        }
    )
    result, hooks = run_once(agent, tmp_path)
    assert result.stop == "max_tokens"
    assert hooks.ends[0].failed and "cut off" in hooks.ends[0].result
    assert not (tmp_path / "x.txt").exists()
    _assert_history_valid(result.messages)


def test_http_error_ends_the_turn_with_error(
    llm: FakeLLM, make_agent: AgentFactory, tmp_path: Path
) -> None:
    llm.push({"status": 500, "body": {"error": {"message": "model crashed"}}})
    result, _ = run_once(make_agent(), tmp_path)
    assert result.stop == "error"
    assert (
        result.error is not None and "HTTP 500" in result.error and "model crashed" in result.error
    )
    assert result.messages == [{"role": "user", "content": "hello"}]


def test_interrupt_stops_a_slow_stream_promptly(
    llm: FakeLLM, make_agent: AgentFactory, tmp_path: Path
) -> None:
    llm.push({"text": "word " * 150, "chunks": 150, "delay": 0.2})  # about 30 s in full
    agent = make_agent()
    hooks = RecordingHooks()
    thread, results = _in_thread(agent, tmp_path, hooks)
    assert hooks.first_text.wait(10)
    agent.interrupt()
    thread.join(timeout=5)
    assert not thread.is_alive()
    [result] = results
    assert result.stop == "cancelled"
    partial = hooks.joined_text
    assert partial and result.final_text == partial
    assert result.messages[-1] == {"role": "assistant", "content": partial}


def test_interrupt_during_a_tool_fails_it_and_the_rest(
    llm: FakeLLM, make_agent: AgentFactory, tmp_path: Path
) -> None:
    fifo = tmp_path / "ready"
    os.mkfifo(fifo)
    llm.push(
        {
            "tool_calls": [
                _call("slow", "terminal", {"command": f"echo ready > {fifo}; sleep 30"}),
                _call("next", "read_file", {"path": "anything"}),
            ]
        }
    )
    agent = make_agent()
    hooks = RecordingHooks()
    thread, results = _in_thread(agent, tmp_path, hooks)
    with open(fifo) as pipe:  # returns once the command is running
        assert pipe.read() == "ready\n"
    agent.interrupt()
    thread.join(timeout=10)
    assert not thread.is_alive()
    [result] = results
    assert result.stop == "cancelled"
    _assert_paired(hooks)
    assert [(e.call_id, e.failed) for e in hooks.ends] == [("slow", True), ("next", True)]
    assert all("interrupted" in e.result for e in hooks.ends)
    _assert_history_valid(result.messages)
    assert len(llm.requests) == 1


def test_idle_interrupt_does_not_poison_the_nextrun_once(
    make_agent: AgentFactory, tmp_path: Path
) -> None:
    agent = make_agent()
    agent.interrupt()
    agent.interrupt()
    result, hooks = run_once(agent, tmp_path, "still there?")
    assert result.stop == "end_turn"
    assert result.final_text == "You said: still there?" == hooks.joined_text
    agent.interrupt()  # idle again, after a finished turn
    assert run_once(agent, tmp_path, "and now?")[0].final_text == "You said: and now?"


def test_steer_is_added_to_the_next_tool_result(
    llm: FakeLLM, make_agent: AgentFactory, tmp_path: Path
) -> None:
    agent = make_agent()
    assert agent.steer("too early") is False  # idle
    llm.push({"tool_calls": [_call("t1", "todo", {})]})
    llm.push({"text": "ok"})
    hooks = RecordingHooks()

    def steer_now(_start: object) -> None:
        assert agent.steer("use tabs, not spaces")

    hooks.on_start = steer_now
    result, _ = run_once(agent, tmp_path, hooks=hooks)
    assert result.pending_steer is None
    tool_message = llm.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert "use tabs, not spaces" in tool_message["content"]


def test_steer_too_late_is_handed_back(
    llm: FakeLLM, make_agent: AgentFactory, tmp_path: Path
) -> None:
    agent = make_agent()
    llm.push({"text": "final answer"})
    hooks = RecordingHooks()
    accepted: list[bool] = []
    hooks.on_text = lambda _text: accepted.append(agent.steer("one more thing"))
    result, _ = run_once(agent, tmp_path, hooks=hooks)
    assert all(accepted) and accepted
    assert result.pending_steer is not None and result.pending_steer.startswith("one more thing")


def test_extra_function_tool_and_todo_plan(
    llm: FakeLLM, make_agent: AgentFactory, tmp_path: Path
) -> None:
    agent = make_agent()
    agent.tools.add_function(
        "srv__shout",
        "Shout a word",
        {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]},
        lambda args: str(args["word"]).upper(),
    )
    assert ("srv__shout", "Shout a word") in agent.tool_descriptions()
    llm.push(
        {
            "tool_calls": [
                _call("s1", "srv__shout", {"word": "hey"}),
                _call(
                    "p1",
                    "todo",
                    {"todos": [{"id": "1", "content": "plan it", "status": "in_progress"}]},
                ),
            ]
        }
    )
    llm.push({"text": "done"})
    result, hooks = run_once(agent, tmp_path)
    assert "srv__shout" in [t["function"]["name"] for t in llm.requests[0]["tools"]]
    assert next(m["content"] for m in result.messages if m["role"] == "tool") == "HEY"
    assert hooks.plans == [[{"id": "1", "content": "plan it", "status": "in_progress"}]]
    _assert_paired(hooks)


def test_second_concurrent_turn_on_one_agent_is_refused(
    llm: FakeLLM, make_agent: AgentFactory, tmp_path: Path
) -> None:
    llm.push({"text": "slow " * 100, "chunks": 100, "delay": 0.2})
    agent = make_agent()
    hooks = RecordingHooks()
    thread, results = _in_thread(agent, tmp_path, hooks)
    assert hooks.first_text.wait(10)
    refused, _ = run_once(agent, tmp_path, "me too")
    assert refused.stop == "error" and refused.error == "a turn is already running"
    agent.interrupt()
    thread.join(timeout=5)
    assert results[0].stop == "cancelled"


def test_a_failing_hook_becomes_an_error_result(
    llm: FakeLLM, make_agent: AgentFactory, tmp_path: Path
) -> None:
    llm.push({"tool_calls": [_call("r1", "read_file", {"path": "x"})]})
    hooks = RecordingHooks()

    def explode(_start: object) -> None:
        raise RuntimeError("hook broke")

    hooks.on_start = explode
    agent = make_agent()
    result, _ = run_once(agent, tmp_path, hooks=hooks)
    assert result.stop == "error"
    assert result.error == "internal error: hook broke"
    _assert_history_valid(result.messages)
    # The agent is usable afterwards.
    assert run_once(agent, tmp_path, "ok?")[0].stop == "end_turn"


def test_sixteen_agents_in_parallel_get_their_own_answers(
    llm: FakeLLM, make_agent: AgentFactory, tmp_path: Path
) -> None:
    agents = [make_agent() for _ in range(16)]
    results: dict[int, TurnResult] = {}

    def run(index: int) -> None:
        results[index] = run_once(agents[index], tmp_path, f"session {index}")[0]

    threads = [threading.Thread(target=run, args=(index,)) for index in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert {index: result.final_text for index, result in results.items()} == {
        index: f"You said: session {index}" for index in range(16)
    }
