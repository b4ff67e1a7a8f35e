"""The scripted model of a conformance run: which tool it calls, with which arguments,
from the tools an agent offers (no process: the responder is a function of the request)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acpwire.conformance._model import CONTENT, SLOW_S, ScriptedModel, marker
from acpwire.conformance._repairs import repairs


def tool(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


def body(text: str, tools: list[dict[str, Any]], *more: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}, *more], "tools": tools}


STR = {"type": "string"}
WRITE = marker("write", "permission-allow", "/tmp/p/a.txt")


def test_it_calls_the_write_tool_with_the_path_and_content() -> None:
    model = ScriptedModel()
    tools = [
        tool("read_file", {"path": STR}, ["path"]),
        tool(
            "write_file",
            {"path": STR, "content": STR, "mode": {"enum": ["w", "a"]}},
            ["path", "content", "mode"],
        ),
    ]
    reply = model(body(f"{WRITE} please", tools))
    assert reply is not None
    (call,) = reply["tool_calls"]
    assert call["name"] == "write_file"
    assert call["arguments"] == {"path": "/tmp/p/a.txt", "content": CONTENT, "mode": "w"}
    seen = model.seen("permission-allow")
    assert seen.called == "write_file" and seen.tools == ["read_file", "write_file"]


def test_an_editor_style_tool_gets_command_create() -> None:
    editor = tool(
        "str_replace_editor",
        {"command": {"enum": ["view", "create"]}, "path": STR, "file_text": STR},
        ["command", "path"],
    )
    reply = ScriptedModel()(body(WRITE, [editor]))
    assert reply is not None
    assert reply["tool_calls"][0]["arguments"] == {
        "path": "/tmp/p/a.txt",
        "file_text": CONTENT,
        "command": "create",
    }


def test_openhands_file_editor_is_found_by_name() -> None:
    # openhands 1.16.0 offers file_editor, terminal, task_tracker, think, task and finish
    editor = tool(
        "file_editor",
        {"command": {"enum": ["view", "create", "str_replace"]}, "path": STR, "file_text": STR},
        ["command", "path"],
    )
    tools = [editor, tool("think", {"thought": STR}, ["thought"])]
    reply = ScriptedModel()(body(WRITE, tools))
    assert reply is not None
    (call,) = reply["tool_calls"]
    assert call["name"] == "file_editor"
    assert call["arguments"]["command"] == "create" and call["arguments"]["file_text"] == CONTENT


def test_a_named_tool_wins_and_a_missing_one_is_said() -> None:
    tools = [
        tool("put", {"file": STR, "text": STR}, []),
        tool("write_file", {"path": STR, "content": STR}, []),
    ]
    reply = ScriptedModel(write_tool="put")(body(WRITE, tools))
    assert reply is not None and reply["tool_calls"][0]["name"] == "put"
    model = ScriptedModel()
    assert _text(model(body(WRITE, [tool("read_file", {"path": STR}, [])]))) == {
        "text": "No tool to write with."
    }
    assert model.seen("permission-allow").called is None


def test_a_shell_call_then_done_once_the_tool_answered() -> None:
    shell = marker("shell", "terminal-refused")
    tools = [tool("terminal", {"command": STR}, ["command"])]
    model = ScriptedModel()
    reply = model(body(shell, tools))
    assert reply is not None and reply["tool_calls"][0]["arguments"] == {
        "command": "echo acpwire-check"
    }
    after = body(
        shell, tools, {"role": "assistant", "tool_calls": [{}]}, {"role": "tool", "content": "x"}
    )
    assert _text(model(after)) == {"text": "Done."}


def _text(reply: Mapping[str, Any] | None) -> dict[str, Any]:
    """A reply without its usage, which every reply carries (checked here)."""
    assert reply is not None
    usage = reply["usage"]
    assert usage["prompt_tokens"] >= 1 and usage["completion_tokens"] >= 1
    return {k: v for k, v in reply.items() if k != "usage"}


def test_every_reply_reports_token_usage() -> None:
    """An OpenAI-compatible server reports usage (an agent asking for
    ``stream_options.include_usage`` may refuse a reply without it: mistral-vibe does)."""
    tools = [tool("write_file", {"path": STR, "content": STR}, [])]
    reply = ScriptedModel()(body(WRITE, tools))
    assert reply is not None and set(reply["usage"]) == {"prompt_tokens", "completion_tokens"}


def test_no_marker_is_left_to_the_server() -> None:
    assert ScriptedModel()(body("Write a title for this chat", [])) is None


def test_repairs_name_what_a_lenient_receiver_changed_but_not_nulls() -> None:
    found = repairs(
        "InitializeResponse",
        {"protocolVersion": 1, "agentCapabilities": {"loadSession": "yes"}, "authMethods": None},
    )
    assert found == [
        'result.agentCapabilities.loadSession: "yes" does not validate (a lenient receiver reads false)'
    ]
    assert (
        repairs(
            "InitializeResponse", {"protocolVersion": 1, "authMethods": [{"id": "a", "name": "A"}]}
        )
        == []
    )


def test_names_are_matched_in_any_case_and_by_word() -> None:
    tools = [
        tool("WriteFile", {"path": STR, "content": STR}, []),
        tool("execute_bash", {"command": STR}, []),
    ]
    model = ScriptedModel()
    reply = model(body(WRITE, tools))
    assert reply is not None and reply["tool_calls"][0]["name"] == "WriteFile"
    reply = model(body(marker("shell", "terminal-refused"), tools))
    assert reply is not None and reply["tool_calls"][0]["name"] == "execute_bash"


def test_the_latest_marked_user_message_counts() -> None:
    tools = [tool("write_file", {"path": STR, "content": STR}, [])]
    earlier = marker("text", "prompt")
    messages = [
        {"role": "user", "content": earlier},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": [{"type": "text", "text": WRITE}]},
        {"role": "user", "content": "<environment>cwd: /tmp/p</environment>"},  # the agent's
    ]
    reply = ScriptedModel()({"messages": messages, "tools": tools})
    assert reply is not None and reply["tool_calls"][0]["name"] == "write_file"


def test_repairs_compare_values_not_spellings() -> None:
    # A number read as a float, an open enum's unknown value kept: nothing was repaired.
    usage = {
        "sessionUpdate": "usage_update",
        "used": 5,
        "size": 10,
        "cost": {"amount": 2, "currency": "USD"},
    }
    assert repairs("SessionNotification", {"sessionId": "s", "update": usage}) == []
    info = {"protocolVersion": 1, "authMethods": [{"id": "a", "name": "A", "type": "future-kind"}]}
    assert repairs("InitializeResponse", info) == []


def test_the_slow_reply_lasts_as_long_streamed_or_not() -> None:
    model = ScriptedModel()
    slow = marker("slow", "cancel")
    streamed = model({**body(f"{slow} count", []), "stream": True})
    whole = model(body(f"{slow} count", []))
    assert streamed is not None and whole is not None
    assert streamed["chunks"] * streamed["delay"] == SLOW_S
    assert whole["initial_delay"] == SLOW_S and whole["text"] == streamed["text"]
