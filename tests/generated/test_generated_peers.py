"""Typed peers over a recording ``Outbound``: right wire names, validated results.

Also runs the downstream agent fixture (tests/fixtures/downstream_agent.py) end to end
against the same recording connection.
"""

from __future__ import annotations

import anyio
import pytest
from pydantic import ValidationError

from acp_v1 import Unknown, models as m
from acp_v1.peers import AgentPeer, ClientPeer, InvalidResult
from tests.fixtures.downstream_agent import ALLOW, REJECT, build_agent
from tests.generated.outbound import RecordingOutbound, Sent

pytestmark = pytest.mark.anyio
SESSION = "sess_peer"


async def test_client_peer_read_text_file_sends_method_and_validates_result() -> None:
    out = RecordingOutbound({"fs/read_text_file": {"content": "line 1\nline 2\n"}})
    params = m.ReadTextFileRequest(session_id=SESSION, path="/p/a.py", line=1, limit=2)
    with anyio.fail_after(5):
        result = await ClientPeer(out).fs_read_text_file(params)
    assert out.sent == [Sent("request", "fs/read_text_file", params)]
    assert type(result) is m.ReadTextFileResponse
    assert result.content == "line 1\nline 2\n"


async def test_client_peer_permission_result_is_the_typed_outcome() -> None:
    raw = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
    out = RecordingOutbound({"session/request_permission": raw})
    params = m.RequestPermissionRequest(
        session_id=SESSION,
        tool_call=m.ToolCallUpdate(tool_call_id="c1", title="rm -rf build", kind="delete"),
        options=[m.PermissionOption(option_id="allow_once", name="Allow", kind="allow_once")],
    )
    with anyio.fail_after(5):
        result = await ClientPeer(out).session_request_permission(params)
    assert out.methods() == ["session/request_permission"]
    assert isinstance(result.outcome, m.RequestPermissionOutcomeSelected)
    assert result.outcome.option_id == "allow_once"


async def test_client_peer_terminal_methods_use_their_wire_names() -> None:
    out = RecordingOutbound(
        {
            "terminal/create": {"terminalId": "term_1"},
            "terminal/output": {
                "output": "ok\n",
                "truncated": False,
                "exitStatus": {"exitCode": 0},
            },
            "terminal/release": {},
        }
    )
    peer = ClientPeer(out)
    with anyio.fail_after(5):
        created = await peer.terminal_create(
            m.CreateTerminalRequest(session_id=SESSION, command="pytest", args=["-q"])
        )
        output = await peer.terminal_output(
            m.TerminalOutputRequest(session_id=SESSION, terminal_id=created.terminal_id)
        )
        released = await peer.terminal_release(
            m.ReleaseTerminalRequest(session_id=SESSION, terminal_id=created.terminal_id)
        )
    assert out.methods() == ["terminal/create", "terminal/output", "terminal/release"]
    assert created.terminal_id == "term_1"
    assert output.output == "ok\n"
    assert output.exit_status is not None
    assert output.exit_status.exit_code == 0
    assert type(released) is m.ReleaseTerminalResponse


async def test_client_peer_session_update_is_a_notification() -> None:
    out = RecordingOutbound()
    params = m.SessionNotification(
        session_id=SESSION,
        update=m.SessionUpdateAgentMessageChunk(content=m.ContentBlockText(text="hello")),
    )
    with anyio.fail_after(5):
        await ClientPeer(out).session_update(params)
    assert out.sent == [Sent("notification", "session/update", params)]
    wire = params.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert wire == {
        "sessionId": SESSION,
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "hello"},
        },
    }


async def test_invalid_raw_result_raises_invalid_result_naming_method_and_field() -> None:
    out = RecordingOutbound({"fs/read_text_file": {"text": "wrong field"}})
    with anyio.fail_after(5), pytest.raises(InvalidResult) as caught:
        await ClientPeer(out).fs_read_text_file(
            m.ReadTextFileRequest(session_id=SESSION, path="/x")
        )
    assert not isinstance(caught.value, ValidationError)
    assert caught.value.method == "fs/read_text_file"
    assert caught.value.field == "content"
    assert str(caught.value).startswith("fs/read_text_file: the peer's result is invalid: content:")


async def test_unknown_values_in_a_result_are_kept() -> None:
    out = RecordingOutbound({"session/prompt": {"stopReason": "paused_by_vendor"}})
    result = await AgentPeer(out).session_prompt(
        m.PromptRequest(session_id=SESSION, prompt=[m.ContentBlockText(text="hi")])
    )
    assert result.stop_reason == Unknown("paused_by_vendor")


async def test_extension_requests_are_sent_by_wire_name_and_typed() -> None:
    out = RecordingOutbound({"_vendor.example/status": {"stopReason": "end_turn"}})
    peer = ClientPeer(out)
    typed = await peer.ext_request("_vendor.example/status", {"q": 1}, result_type=m.PromptResponse)
    assert typed == m.PromptResponse(stop_reason="end_turn")
    raw = await peer.ext_request("_vendor.example/status")
    assert raw == {"stopReason": "end_turn"}
    await AgentPeer(out).ext_notify("_vendor.example/ping", {"n": 2})
    assert out.sent[-1] == Sent("notification", "_vendor.example/ping", {"n": 2})
    assert out.methods() == ["_vendor.example/status"] * 2 + ["_vendor.example/ping"]
    with pytest.raises(ValueError, match="start with '_'"):
        await peer.ext_notify("vendor/ping")
    out2 = RecordingOutbound({"_x/y": {"stopReason": 5}})
    with pytest.raises(InvalidResult) as caught:
        await AgentPeer(out2).ext_request("_x/y", result_type=m.PromptResponse)
    assert (caught.value.method, caught.value.field) == ("_x/y", "stopReason")


async def test_agent_peer_prompt_and_cancel() -> None:
    out = RecordingOutbound({"session/prompt": {"stopReason": "end_turn"}})
    peer = AgentPeer(out)
    prompt = m.PromptRequest(session_id=SESSION, prompt=[m.ContentBlockText(text="hi")])
    with anyio.fail_after(5):
        result = await peer.session_prompt(prompt)
        await peer.session_cancel(m.CancelNotification(session_id=SESSION))
    assert result.stop_reason == "end_turn"
    assert [(s.kind, s.method) for s in out.sent] == [
        ("request", "session/prompt"),
        ("notification", "session/cancel"),
    ]


async def _run_echo_agent(option: str) -> tuple[RecordingOutbound, m.PromptResponse]:
    out = RecordingOutbound(
        {
            "session/request_permission": {"outcome": {"outcome": "selected", "optionId": option}},
            "fs/read_text_file": {"content": "print('hi')\n"},
        }
    )
    agent = build_agent(ClientPeer(out))
    with anyio.fail_after(5):
        init = await agent.initialize(m.InitializeRequest(protocol_version=1))
        assert init.protocol_version == 1
        session = await agent.session_new(m.NewSessionRequest(cwd="/p", mcp_servers=[]))
        prompt: list[m.ContentBlock] = [
            m.ContentBlockText(text="Look at this"),
            m.ContentBlockResourceLink(name="a.py", uri="file:///p/a.py"),
        ]
        response = await agent.session_prompt(
            m.PromptRequest(session_id=session.session_id, prompt=prompt)
        )
    return out, response


def _updates(out: RecordingOutbound) -> list[m.SessionUpdate]:
    notes = [s.params for s in out.sent if s.method == "session/update"]
    assert all(isinstance(n, m.SessionNotification) for n in notes)
    return [n.update for n in notes]


async def test_downstream_agent_runs_through_the_client_peer() -> None:
    out, response = await _run_echo_agent(ALLOW)
    assert response.stop_reason == "end_turn"
    assert out.methods() == [
        "session/update",  # plan
        "session/update",  # echoed text
        "session/update",  # tool_call
        "session/request_permission",
        "fs/read_text_file",
        "session/update",  # tool_call_update
    ]
    updates = _updates(out)
    assert [type(u) for u in updates] == [
        m.SessionUpdatePlan,
        m.SessionUpdateAgentMessageChunk,
        m.SessionUpdateToolCall,
        m.SessionUpdateToolCallUpdate,
    ]
    done = updates[-1]
    assert isinstance(done, m.SessionUpdateToolCallUpdate)
    assert done.status == "completed"
    assert done.model_dump(mode="json", by_alias=True, exclude_none=True)["content"] == [
        {"type": "content", "content": {"type": "text", "text": "print('hi')\n"}}
    ]


async def test_downstream_agent_respects_a_rejection() -> None:
    out, response = await _run_echo_agent(REJECT)
    assert response.stop_reason == "end_turn"
    assert "fs/read_text_file" not in out.methods()
    done = _updates(out)[-1]
    assert isinstance(done, m.SessionUpdateToolCallUpdate)
    assert done.status == "failed"
