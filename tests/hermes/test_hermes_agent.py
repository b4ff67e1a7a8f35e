""":class:`acpwire.hermes.HermesAgent` over a scripted class with ``AIAgent``'s shape:
callbacks to hooks, paired tool ids, plans, per-turn usage, interrupts, failures.

Hermes itself is not installed here, so the per-turn approval plumbing (which imports
Hermes' modules) is skipped; the end-to-end tests cover it against real Hermes.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from acpwire.agent.seam import TurnResult
from acpwire.hermes.agent import HermesAgent
from acpwire.server.sessions.options import agent_provider, stored_model
from tests.agent.recording import RecordingHooks
from tests.hermes.fake_aiagent import Compressor, ScriptedAIAgent

TODO_RESULT = json.dumps(
    {"todos": [{"id": "1", "content": "write it", "status": "in_progress"}], "summary": {}}
)


def make(tmp_path: Path, **fields: object) -> tuple[HermesAgent, ScriptedAIAgent]:
    fake = ScriptedAIAgent(**fields)  # type: ignore[arg-type]  # the test's field values
    return HermesAgent(fake, task_id="acp-1", cwd=str(tmp_path)), fake


def test_a_turn_streams_text_and_pairs_every_tool_call(tmp_path: Path) -> None:
    agent, fake = make(
        tmp_path,
        script=[
            ("thought", "thinking"),
            ("text", "Plan"),
            ("text", "ning."),
            ("tool", "call_todo", "todo", {"todos": []}, TODO_RESULT),
            ("tool", "call_read", "read_file", '{"path": "a.py"}', {"content": "x"}),
            ("usage", 11, 7),
        ],
        final="Planning.",
    )
    hooks = RecordingHooks()
    result = agent.run_turn("go", [], cwd=str(tmp_path), hooks=hooks)
    assert hooks.joined_text == "Planning." and hooks.thoughts == ["thinking"]
    assert [(s.call_id, s.name, s.args) for s in hooks.starts] == [
        ("call_todo", "todo", {"todos": []}),
        ("call_read", "read_file", {"path": "a.py"}),
    ]
    assert [(e.call_id, e.failed) for e in hooks.ends] == [
        ("call_todo", False),
        ("call_read", False),
    ]
    assert json.loads(hooks.ends[1].result) == {"content": "x"}  # a dict result, as JSON
    assert hooks.plans == [[{"id": "1", "content": "write it", "status": "in_progress"}]]
    assert (result.stop, result.final_text, result.streamed) == ("end_turn", "Planning.", True)
    assert (result.usage.input_tokens, result.usage.output_tokens) == (11, 7)
    assert fake.calls[0] == {"user_message": "go", "task_id": "acp-1"}
    # Hermes' callbacks never outlive the turn that set them.
    assert fake.stream_delta_callback is None and fake.tool_start_callback is None


def test_usage_is_per_turn_although_hermes_counts_per_session(tmp_path: Path) -> None:
    agent, fake = make(tmp_path, script=[("usage", 11, 7)])
    agent.run_turn("one", [], cwd=str(tmp_path), hooks=RecordingHooks())
    fake.script = [("usage", 30, 4)]
    second = agent.run_turn("two", [], cwd=str(tmp_path), hooks=RecordingHooks())
    assert (second.usage.input_tokens, second.usage.output_tokens) == (30, 4)
    assert fake.session_prompt_tokens == 41


def test_a_call_left_open_gets_a_failed_end_and_a_lone_end_gets_a_start(tmp_path: Path) -> None:
    agent, _ = make(
        tmp_path,
        script=[
            ("start", "call_a", "terminal", {"command": "sleep 9"}),
            ("complete", "call_b", "read_file", {"path": "b"}, "text"),
        ],
    )
    hooks = RecordingHooks()
    agent.run_turn("go", [], cwd=str(tmp_path), hooks=hooks)
    assert [s.call_id for s in hooks.starts] == ["call_a", "call_b"]
    ends = {e.call_id: e for e in hooks.ends}
    assert set(ends) == {"call_a", "call_b"}
    assert ends["call_a"].failed and "ended before" in ends["call_a"].result
    assert not ends["call_b"].failed and ends["call_b"].result == "text"


def test_ids_hermes_reuses_in_a_later_turn_are_replaced(tmp_path: Path) -> None:
    agent, _ = make(tmp_path, script=[("tool", "call_0", "read_file", {"path": "a"}, "x")])
    first, second = RecordingHooks(), RecordingHooks()
    agent.run_turn("one", [], cwd=str(tmp_path), hooks=first)
    agent.run_turn("two", [], cwd=str(tmp_path), hooks=second)
    assert first.starts[0].call_id == "call_0"
    assert second.starts[0].call_id.startswith("tc-")
    assert second.ends[0].call_id == second.starts[0].call_id


def test_interrupt_while_idle_leaves_no_sticky_flag(tmp_path: Path) -> None:
    agent, fake = make(tmp_path, script=[("text", "hello")])
    agent.interrupt()
    assert fake._interrupt_requested is False
    result = agent.run_turn("go", [], cwd=str(tmp_path), hooks=RecordingHooks())
    assert result.stop == "end_turn" and result.final_text == "done"


def test_interrupt_during_a_turn_cancels_it(tmp_path: Path) -> None:
    agent, fake = make(tmp_path, script=[("text", "partial"), ("wait_interrupt",)])
    hooks = RecordingHooks()
    box: list[TurnResult] = []
    worker = threading.Thread(
        target=lambda: box.append(agent.run_turn("go", [], cwd=str(tmp_path), hooks=hooks))
    )
    worker.start()
    assert fake.waiting.wait(timeout=10)
    assert agent.steer("use python") is True
    agent.interrupt()
    worker.join(timeout=10)
    (result,) = box
    assert result.stop == "cancelled" and result.final_text is None
    assert fake._pending_steer == "use python"
    assert agent.steer("too late") is False  # no turn is running any more
    assert fake._interrupt_requested is False


def test_a_turn_that_raises_reports_an_error_and_keeps_the_prompt(tmp_path: Path) -> None:
    agent, _ = make(tmp_path, script=[("start", "c1", "terminal", {}), ("raise", "boom")])
    hooks = RecordingHooks()
    history = [{"role": "user", "content": "earlier"}]
    result = agent.run_turn("now", history, cwd=str(tmp_path), hooks=hooks)
    assert result.stop == "error" and result.error == "RuntimeError: boom"
    assert result.messages == [*history, {"role": "user", "content": "now"}]
    assert [(e.call_id, e.failed) for e in hooks.ends] == [("c1", True)]


def test_context_usage_compress_model_and_tools(tmp_path: Path) -> None:
    tools = [{"type": "function", "function": {"name": "read_file", "description": "Read.\nMore"}}]
    agent, fake = make(tmp_path, tools=tools)
    history = [{"role": "user", "content": "x" * 400}]
    used, size = agent.context_usage(history)
    assert size == 131_072 and used >= 100
    compressed = agent.compress([*history, {"role": "assistant", "content": "y"}], force=True)
    assert compressed == [
        {"role": "user", "content": "summary"},
        {"role": "assistant", "content": "y"},
    ]
    assert fake.calls[-1]["compress"]["force"] is True
    assert fake.calls[-1]["compress"]["task_id"] == "acp-1"
    assert agent.tool_descriptions() == [("read_file", "Read.")]
    agent.set_model("other-model")
    assert agent.model == "other-model"
    with pytest.raises(ValueError, match="unknown-model"):
        agent.set_model("unknown-model")
    agent.set_reasoning_effort("high")
    assert fake.reasoning_config == {"enabled": True, "effort": "high"}
    agent.set_reasoning_effort(None)
    assert fake.reasoning_config is None
    agent.close()
    assert fake.closed


def test_compression_threshold_and_reset_are_hermes_own(tmp_path: Path) -> None:
    agent, fake = make(tmp_path)
    assert agent.compression_threshold() == 98_304  # the compressor's, not a guess
    fake.context_compressor = Compressor(context_length=100_000, threshold_tokens=0)
    assert agent.compression_threshold() == 80_000  # no threshold: 0.8 of the window
    fake.session_prompt_tokens, fake.context_compressor.last_prompt_tokens = 500, 400
    agent.reset()
    assert (fake.session_prompt_tokens, fake.context_compressor.last_prompt_tokens) == (0, 0)


def test_model_choice_keeps_a_provider_other_than_the_configured_one(tmp_path: Path) -> None:
    """What a session stores for its model: ``provider:model`` once it moved to another
    provider (a restore must not put that model on the configured provider)."""
    fake = ScriptedAIAgent()
    agent = HermesAgent(fake, task_id="acp-1", cwd=str(tmp_path), home_provider="custom")
    assert agent.model_choice == "scripted-model"
    assert stored_model(agent) == "scripted-model"
    fake.provider = "openrouter"
    assert agent.model_choice == "openrouter:scripted-model"
    assert stored_model(agent) == "openrouter:scripted-model"


def test_stored_model_of_an_agent_without_a_choice_is_its_model() -> None:
    class Plain:
        model = "m-1"

    assert stored_model(Plain()) == "m-1"
    assert agent_provider(Plain(), "factory-provider") == "factory-provider"


def test_a_hermes_session_names_its_own_provider(tmp_path: Path) -> None:
    fake = ScriptedAIAgent(provider="openrouter")
    agent = HermesAgent(fake, task_id="acp-1", cwd=str(tmp_path), home_provider="custom")
    assert agent_provider(agent, "custom") == "openrouter"
