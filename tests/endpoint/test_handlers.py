"""Handlers at bind time, extension methods both ways, and who is blamed for an error.

Real connections over a memory stream pair: the client is the typed fixture
(tests/fixtures/typed_client.py, also checked by ``mypy --strict``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from acp_v1 import Unknown, models as m
from acp_v1.interfaces import Agent, Client
from acp_v1.peers import ClientPeer
from acpwire.link import AgentConnection, ClientConnection, InvalidResult
from acpwire.link.endpoint import AcpEndpoint
from acpwire.link.handlers import CapabilityError, HandlerError, ext_method, ext_notification
from acpwire.rpc import RpcError, memory_pair
from tests.fixtures.typed_client import StatusReply, Viewer, describe, stop_text

pytestmark = pytest.mark.anyio


class Ready(BaseModel):
    level: int


class Agentish(Agent):
    def __init__(self, client: ClientPeer) -> None:
        self.client = client
        self.notes: list[object] = []

    async def session_prompt(self, params: m.PromptRequest) -> m.PromptResponse:
        # The handler's own bug: a model built wrongly (not the peer's params).
        m.PromptResponse.model_validate({"stopReason": 7})
        return m.PromptResponse(stop_reason="end_turn")

    async def session_fork(self, params: m.ForkSessionRequest) -> m.ForkSessionResponse:
        return m.ForkSessionResponse(session_id="fork-1")

    @ext_method("_agent.example/ready")
    async def ready(self, params: object) -> StatusReply:
        return StatusReply(ready=True)

    @ext_method("_agent.example/level")
    async def level(self, params: Ready) -> dict[str, int]:
        return {"twice": params.level * 2}

    @ext_notification("_agent.example/note")
    async def note(self, params: Ready) -> None:
        self.notes.append(params)


# -- bind time ---------------------------------------------------------------------


def test_a_misspelled_handler_is_refused_with_the_name_meant() -> None:
    class Typo(Agent):
        async def session_promt(self, params: m.PromptRequest) -> m.PromptResponse:
            return m.PromptResponse(stop_reason="end_turn")

    with pytest.raises(
        HandlerError, match="session_promt is no ACP agent method; did you mean session_prompt"
    ):
        AcpEndpoint("agent", Typo())


def test_sdk_names_and_the_other_roles_methods_are_refused() -> None:
    class SdkStyle:
        async def prompt(self, params: object) -> object:
            return {}

        async def new_session(self, params: object) -> object:
            return {}

        async def session_update(self, params: object) -> None:
            return None

    with pytest.raises(HandlerError) as caught:
        AcpEndpoint("agent", SdkStyle())
    text = str(caught.value)
    assert "prompt is the official SDK's name; acpwire calls session_prompt" in text
    assert "new_session is the official SDK's name; acpwire calls session_new" in text
    assert "session_update is a method of the client, not of the agent" in text


def test_a_misspelt_sdk_name_is_suggested_as_acpwires_name() -> None:
    class Promt(Agent):
        async def promt(self, params: m.PromptRequest) -> m.PromptResponse:
            return m.PromptResponse(stop_reason="end_turn")

    with pytest.raises(HandlerError) as caught:
        AcpEndpoint("agent", Promt())
    assert str(caught.value) == (
        "Promt bound as the agent: promt is no ACP agent method; did you mean session_prompt?"
    )


def test_a_protocol_method_without_async_is_refused_when_bound() -> None:
    class Blocking(Agent):
        def session_new(  # type: ignore[override]
            self, params: m.NewSessionRequest
        ) -> m.NewSessionResponse:
            return m.NewSessionResponse(session_id="s")

    with pytest.raises(HandlerError) as caught:
        AcpEndpoint("agent", Blocking())
    assert str(caught.value) == (
        "Blocking bound as the agent: session_new is not async: write async def session_new"
    )


def test_an_extension_decorator_on_a_sync_function_fails_at_once() -> None:
    with pytest.raises(TypeError) as caught:

        class Counter(Agent):
            @ext_method("_echo/count")  # type: ignore[type-var]
            def count(self, params: object) -> dict[str, int]:
                return {}

    assert str(caught.value) == (
        "@ext_method('_echo/count') on test_an_extension_decorator_on_a_sync_function_fails_at"
        "_once.<locals>.Counter.count, which is not async: write async def count"
    )


class Greeting(Agentish):
    async def initialize(self, params: m.InitializeRequest) -> m.InitializeResponse:
        return m.InitializeResponse(protocol_version=1)


async def test_a_call_is_checked_against_what_the_client_advertised() -> None:
    async with linked(agent=Greeting) as (agent, client):
        read = m.ReadTextFileRequest(session_id="s", path="/x")
        with pytest.raises(RpcError) as unchecked:  # no initialize seen: sent, and refused
            await agent.peer.fs_read_text_file(read)
        assert unchecked.value.code == -32601
        caps = m.ClientCapabilities(fs=m.FileSystemCapabilities(read_text_file=True))
        await client.peer.initialize(
            m.InitializeRequest(protocol_version=1, client_capabilities=caps)
        )
        with pytest.raises(RpcError) as sent:  # advertised: sent (Viewer lacks it: -32601)
            await agent.peer.fs_read_text_file(read)
        assert sent.value.code == -32601
        with pytest.raises(CapabilityError) as refused:
            await agent.peer.fs_write_text_file(
                m.WriteTextFileRequest(session_id="s", path="/x", content="")
            )
        assert str(refused.value) == (
            "fs/write_text_file: the client's initialize did not advertise "
            "clientCapabilities.fs.writeTextFile: check it before calling "
            "(ACP v1 file-system § Checking Support)"
        )
        with pytest.raises(
            CapabilityError, match=r"did not advertise clientCapabilities\.terminal:"
        ):
            await agent.peer.terminal_create(m.CreateTerminalRequest(session_id="s", command="ls"))


class Forker(Agentish):
    """Advertises fork and images, nothing else."""

    async def initialize(self, params: m.InitializeRequest) -> m.InitializeResponse:
        caps = m.AgentCapabilities(
            session_capabilities=m.SessionCapabilities(fork=m.SessionForkCapabilities()),
            prompt_capabilities=m.PromptCapabilities(image=True),
        )
        return m.InitializeResponse(protocol_version=1, agent_capabilities=caps)


async def test_a_clients_call_is_checked_against_what_the_agent_advertised() -> None:
    """The mirror of the agent's check: a client's session/load, an MCP transport, a
    prompt's content the agent's initialize answer did not advertise, refused before
    anything is sent; what it advertised is sent."""
    load = m.LoadSessionRequest(session_id="s", cwd="/p", mcp_servers=[])
    async with linked(agent=Forker) as (_, client):
        with pytest.raises(RpcError) as unchecked:  # no initialize answer yet: sent
            await client.peer.session_load(load)
        assert unchecked.value.code == -32601
        await client.peer.initialize(m.InitializeRequest(protocol_version=1))
        with pytest.raises(CapabilityError) as refused:
            await client.peer.session_load(load)
        assert str(refused.value) == (
            "session/load: the agent's initialize did not advertise "
            "agentCapabilities.loadSession: check it before calling "
            "(ACP v1 session-setup § Loading Sessions)"
        )
        http = m.McpServerHttp(name="docs", url="http://127.0.0.1:9/mcp", headers=[])
        with pytest.raises(
            CapabilityError,
            match=r"^session/new with an http MCP server: .*"
            r"agentCapabilities\.mcpCapabilities\.http:",
        ):
            await client.peer.session_new(m.NewSessionRequest(cwd="/p", mcp_servers=[http]))
        audio = m.ContentBlockAudio(data="AAAA", mime_type="audio/wav")
        image = m.ContentBlockImage(data="AAAA", mime_type="image/png")
        with pytest.raises(CapabilityError, match=r"^session/prompt with audio content: "):
            await client.peer.session_prompt(m.PromptRequest(session_id="s", prompt=[image, audio]))
        with pytest.raises(RpcError) as sent:  # images advertised: sent (the handler's bug)
            await client.peer.session_prompt(m.PromptRequest(session_id="s", prompt=[image]))
        assert sent.value.code == -32603
        with pytest.raises(RpcError) as fork:  # advertised: sent (unstable, so -32601 here)
            await client.peer.session_fork(m.ForkSessionRequest(session_id="s", cwd="/p"))
        assert fork.value.code == -32601


async def test_check_capabilities_false_sends_every_call() -> None:
    (a_recv, a_send), (c_recv, c_send) = memory_pair()
    agent = AgentConnection(Forker, a_recv, a_send)
    client = ClientConnection(Viewer, c_recv, c_send, check_capabilities=False)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.serve)
        tg.start_soon(client.serve)
        await client.peer.initialize(m.InitializeRequest(protocol_version=1))
        with pytest.raises(RpcError) as sent:
            await client.peer.session_load(
                m.LoadSessionRequest(session_id="s", cwd="/p", mcp_servers=[])
            )
        assert sent.value.code == -32601
        await client.close()
        await agent.close()
        tg.cancel_scope.cancel()


async def test_a_dict_result_that_validates_is_fine() -> None:
    class Plain(Client):
        def __init__(self, agent: object) -> None:
            pass

        async def fs_read_text_file(self, params: m.ReadTextFileRequest) -> m.ReadTextFileResponse:
            return {"content": "text"}  # type: ignore[return-value]

    async with linked(client=Plain) as (agent, _):
        read = await agent.peer.fs_read_text_file(m.ReadTextFileRequest(session_id="s", path="/x"))
        assert read.content == "text"


def test_a_client_cannot_be_bound_as_the_agent() -> None:
    with pytest.raises(HandlerError, match="Viewer is an ACP client"):
        AcpEndpoint("agent", Viewer(agent=None))  # type: ignore[arg-type]


def test_helpers_and_right_names_bind() -> None:
    class Fine(Agent):
        async def session_new(self, params: m.NewSessionRequest) -> m.NewSessionResponse:
            return m.NewSessionResponse(session_id="s")

        async def refresh_cache(self) -> None:  # an unrelated helper is no protocol method
            return None

        def session_prompt_count(self) -> int:  # not async: never taken for a handler
            return 0

    assert AcpEndpoint("agent", Fine()).implements("session/new")


def test_sdk_aliases_name_real_handlers() -> None:
    from acp_v1 import methods
    from acpwire.link.handlers import _SDK_NAMES

    for role, names in _SDK_NAMES.items():
        tables = (
            (methods.AGENT_REQUESTS, methods.AGENT_NOTIFICATIONS)
            if role == "agent"
            else (methods.CLIENT_REQUESTS, methods.CLIENT_NOTIFICATIONS)
        )
        handlers = {spec.handler for table in tables for spec in table.values()}
        assert set(names.values()) <= handlers, role


# -- over a connection -----------------------------------------------------------------


@asynccontextmanager
async def linked(
    *,
    unstable: bool = False,
    client: Callable[[Any], Client] = Viewer,
    agent: Callable[[ClientPeer], Agentish] = Agentish,
) -> AsyncIterator[tuple[AgentConnection[Agentish], ClientConnection[Any]]]:
    (a_recv, a_send), (c_recv, c_send) = memory_pair()
    served = AgentConnection(agent, a_recv, a_send, unstable=unstable)
    viewer = ClientConnection(client, c_recv, c_send)
    async with anyio.create_task_group() as tg:
        tg.start_soon(served.serve)
        tg.start_soon(viewer.serve)
        with anyio.fail_after(5):
            yield served, viewer
        tg.cancel_scope.cancel()


async def test_extension_requests_and_notifications_both_ways() -> None:
    async with linked() as (agent, client):
        viewer = client.handler
        assert isinstance(viewer, Viewer)
        # agent -> client: typed request to the client's decorated method
        reply = await agent.peer.ext_request(
            "_viewer.example/status", {"verbose": True}, result_type=StatusReply
        )
        assert reply == StatusReply(ready=True, detail="0 chunks")
        await agent.peer.ext_notify("_viewer.example/ping", {"n": 1})
        # client -> agent
        assert await viewer.ask_agent() is True
        assert await client.peer.ext_request("_agent.example/level", {"level": 21}) == {"twice": 42}
        await client.peer.ext_notify("_agent.example/note", {"level": 3})
        await client.peer.ext_request("_agent.example/ready")  # notifications arrive in order
        assert agent.handler.notes == [Ready(level=3)]
        assert viewer.pings == [{"n": 1}]
        with pytest.raises(RpcError) as bad:
            await client.peer.ext_request("_agent.example/level", {"level": "high"})
        assert bad.value.code == -32602
        with pytest.raises(RpcError) as unknown:
            await client.peer.ext_request("_agent.example/nothing")
        assert unknown.value.code == -32601


async def test_the_extension_hook_gets_the_wire_name() -> None:
    seen: list[tuple[str, object]] = []

    class Hook:
        async def ext_method(self, method: str, params: object) -> object:
            seen.append((method, params))
            return {"ok": True}

        async def ext_notification(self, method: str, params: object) -> None:
            seen.append((method, params))

    (a_recv, a_send), (c_recv, c_send) = memory_pair()
    agent = AgentConnection(Agentish, a_recv, a_send, extensions=Hook())
    client = ClientConnection(Viewer, c_recv, c_send)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.serve)
        tg.start_soon(client.serve)
        with anyio.fail_after(5):
            assert await client.peer.ext_request("_other/thing", {"a": 1}) == {"ok": True}
            await client.peer.ext_notify("_other/note", {"b": 2})
            await client.peer.ext_request("_agent.example/ready")
        tg.cancel_scope.cancel()
    assert seen == [("_other/thing", {"a": 1}), ("_other/note", {"b": 2})]


async def test_the_handlers_own_validation_error_is_an_internal_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with linked() as (_, client):
        with caplog.at_level(logging.ERROR), pytest.raises(RpcError) as ours:
            await client.peer.session_prompt(
                m.PromptRequest(session_id="s", prompt=[m.ContentBlockText(text="x")])
            )
        assert ours.value.code == -32603
        assert "Traceback" in caplog.text and "HandlerBug" not in caplog.text
        assert "request session/prompt failed: ValidationError: stopReason" in caplog.text
        assert isinstance(ours.value.data, dict)
        assert ours.value.data["exception"] == "ValidationError"
        with pytest.raises(RpcError) as theirs:
            await client.connection.request("session/prompt", {"sessionId": "s", "prompt": 5})
        assert theirs.value.code == -32602
        assert "prompt" in theirs.value.message


async def test_an_implemented_unstable_method_is_logged_as_not_enabled(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with linked(unstable=False) as (_, client):
        with caplog.at_level(logging.INFO), pytest.raises(RpcError) as refused:
            await client.peer.session_fork(
                m.ForkSessionRequest(session_id="s", cwd="/tmp", mcp_servers=[])
            )
        assert refused.value.code == -32601
        assert "unstable method not enabled" in caplog.text
        assert "unknown method 'session/fork'" not in caplog.text


async def test_a_peers_invalid_result_names_method_and_field() -> None:
    class Liar(Client):
        def __init__(self, agent: object) -> None:
            pass

        @ext_method("_liar/read")
        async def read(self, params: object) -> object:
            return {"content": 42}  # any JSON goes out: the caller's result_type checks it

    async with linked(client=Liar) as (agent, _):
        with pytest.raises(InvalidResult) as caught:
            await agent.peer.ext_request("_liar/read", {}, result_type=m.ReadTextFileResponse)
        assert (caught.value.method, caught.value.field) == ("_liar/read", "content")


async def test_a_handlers_wrong_result_is_a_type_error_on_its_own_side(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Wrong(Client):
        def __init__(self, agent: object) -> None:
            pass

        async def fs_read_text_file(self, params: m.ReadTextFileRequest) -> m.ReadTextFileResponse:
            return {"content": 42}  # type: ignore[return-value]

        async def fs_write_text_file(
            self, params: m.WriteTextFileRequest
        ) -> m.WriteTextFileResponse:
            return "written"  # type: ignore[return-value]

    async with linked(client=Wrong) as (agent, _):
        with caplog.at_level(logging.ERROR), pytest.raises(RpcError) as read:
            await agent.peer.fs_read_text_file(m.ReadTextFileRequest(session_id="s", path="/x"))
        with pytest.raises(RpcError) as written:
            request = m.WriteTextFileRequest(session_id="s", path="/x", content="")
            await agent.peer.fs_write_text_file(request)
    assert read.value.data == {
        "exception": "TypeError",
        "message": "fs/read_text_file: Wrong.fs_read_text_file returned a dict that is not a "
        "ReadTextFileResponse: content: Input should be a valid string",
    }
    assert written.value.message == (
        "Internal error: TypeError: fs/write_text_file: Wrong.fs_write_text_file returned str, "
        "expected a WriteTextFileResponse (acp_v1.models.WriteTextFileResponse)"
    )
    assert "client: request fs/write_text_file failed: TypeError" in caplog.text


async def test_unknown_values_reach_the_handler_and_the_natural_dispatch() -> None:
    async with linked() as (agent, client):
        lines = [
            {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "t", "status": "completed"},
            {"sessionUpdate": "tool_call_update", "toolCallId": "c2", "status": "paused"},
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}},
            {"sessionUpdate": "vendor_banner", "text": "!"},
        ]
        for update in lines:
            await agent.connection.notify("session/update", {"sessionId": "s", "update": update})
        await agent.peer.ext_request("_viewer.example/status", {})  # after the notifications
        viewer = client.handler
        assert isinstance(viewer, Viewer)
        assert viewer.tools == {"c1": "completed", "c2": "unknown:paused"}
        assert viewer.text == ["hi"]
        assert viewer.unknown == ["vendor_banner"]
    assert describe(Unknown("x")) == "unknown:x"
    assert (
        stop_text(m.PromptResponse.model_validate_json(json.dumps({"stopReason": "later"})))
        == "later"
    )
