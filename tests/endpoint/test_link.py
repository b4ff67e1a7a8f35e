"""Typed agent and client wired over in-memory streams: routing, -32601, unstable gating."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from acp_v1 import models as m
from acp_v1.interfaces import Agent, Client
from acp_v1.peers import AgentPeer, ClientPeer
from acpwire.link import AgentConnection, ClientConnection
from acpwire.rpc import RpcError, memory_pair

pytestmark = pytest.mark.anyio


class EchoAgent(Agent):
    """Implements a few agent methods; streams one update per prompt."""

    def __init__(self, client: ClientPeer) -> None:
        self.client = client
        self.cancelled: list[str] = []

    async def initialize(self, params: m.InitializeRequest) -> m.InitializeResponse:
        return m.InitializeResponse(protocol_version=1)

    async def session_new(self, params: m.NewSessionRequest) -> m.NewSessionResponse:
        return m.NewSessionResponse(session_id="s-1")

    async def session_prompt(self, params: m.PromptRequest) -> m.PromptResponse:
        text = "".join(b.text for b in params.prompt if isinstance(b, m.ContentBlockText))
        await self.client.session_update(
            m.SessionNotification(
                session_id=params.session_id,
                update=m.SessionUpdateAgentMessageChunk(
                    content=m.ContentBlockText(text=text.upper())
                ),
            )
        )
        return m.PromptResponse(stop_reason="end_turn")

    async def session_cancel(self, params: m.CancelNotification) -> None:
        self.cancelled.append(params.session_id)


class InheritsStubs(Agent):
    """Subclasses the interface Protocol without implementing session/list."""

    def __init__(self, client: ClientPeer) -> None:
        self.client = client

    async def initialize(self, params: m.InitializeRequest) -> m.InitializeResponse:
        return m.InitializeResponse(protocol_version=1)


class RecordingClient(Client):
    def __init__(self, agent: AgentPeer) -> None:
        self.agent = agent
        self.updates: list[m.SessionNotification] = []

    async def session_update(self, params: m.SessionNotification) -> None:
        self.updates.append(params)


async def _pair(agent_cls: type, *, unstable: bool = False):  # type: ignore[no-untyped-def]
    (a_recv, a_send), (c_recv, c_send) = memory_pair()
    agent = AgentConnection(agent_cls, a_recv, a_send, unstable=unstable)
    client = ClientConnection(RecordingClient, c_recv, c_send)
    return agent, client


async def test_prompt_round_trip_delivers_updates_before_answer() -> None:
    agent, client = await _pair(EchoAgent)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.serve)
        tg.start_soon(client.serve)
        with anyio.fail_after(5):
            init = await client.peer.initialize(m.InitializeRequest(protocol_version=1))
            assert init.protocol_version == 1
            new = await client.peer.session_new(m.NewSessionRequest(cwd="/tmp", mcp_servers=[]))
            result = await client.peer.session_prompt(
                m.PromptRequest(session_id=new.session_id, prompt=[m.ContentBlockText(text="hi")])
            )
            assert result.stop_reason == "end_turn"
            texts = [u.update.content for u in client.handler.updates]
            assert texts == [m.ContentBlockText(text="HI")]
            await client.peer.session_cancel(m.CancelNotification(session_id="s-1"))
        tg.cancel_scope.cancel()


async def test_unimplemented_and_inherited_stub_methods_answer_method_not_found() -> None:
    for cls in (EchoAgent, InheritsStubs):
        agent, client = await _pair(cls)
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent.serve)
            tg.start_soon(client.serve)
            with anyio.fail_after(5), pytest.raises(RpcError) as info:
                await client.peer.session_list(m.ListSessionsRequest())
            assert info.value.code == -32601
            tg.cancel_scope.cancel()


async def test_unstable_method_is_gated_unless_opted_in() -> None:
    class Forking(EchoAgent):
        async def session_fork(self, params: m.ForkSessionRequest) -> m.ForkSessionResponse:
            return m.ForkSessionResponse(session_id="fork-1")

    for unstable, expect_ok in ((False, False), (True, True)):
        agent, client = await _pair(Forking, unstable=unstable)
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent.serve)
            tg.start_soon(client.serve)
            with anyio.fail_after(5):
                request = m.ForkSessionRequest(session_id="s-1", cwd="/tmp", mcp_servers=[])
                if expect_ok:
                    assert (await client.peer.session_fork(request)).session_id == "fork-1"
                else:
                    with pytest.raises(RpcError) as info:
                        await client.peer.session_fork(request)
                    assert info.value.code == -32601
            tg.cancel_scope.cancel()


async def test_invalid_params_answer_32602_and_meta_stays_separate() -> None:
    (a_recv, a_send), (c_recv, c_send) = memory_pair()
    seen: list[m.NewSessionRequest] = []

    class Capturing(EchoAgent):
        async def session_new(self, params: m.NewSessionRequest) -> m.NewSessionResponse:
            seen.append(params)
            return m.NewSessionResponse(session_id="s-2")

    agent = AgentConnection(Capturing, a_recv, a_send)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.serve)
        with anyio.fail_after(5):
            bad = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": 5}}
            good = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/new",
                "params": {"cwd": "/visible", "mcpServers": [], "_meta": {"cwd": "/hidden"}},
            }
            for msg in (bad, good):
                await c_send.send(json.dumps(msg).encode() + b"\n")
            answers: list[dict[str, Any]] = []
            buf = b""
            while len(answers) < 2:
                buf += await c_recv.receive()
                *lines, buf = buf.split(b"\n")
                answers += [json.loads(x) for x in lines if x]
        tg.cancel_scope.cancel()
    by_id = {a["id"]: a for a in answers}
    assert by_id[1]["error"]["code"] == -32602
    assert "cwd" in by_id[1]["error"]["message"]
    assert by_id[2]["result"] == {"sessionId": "s-2"}
    assert seen[0].cwd == "/visible" and seen[0].meta == {"cwd": "/hidden"}


@pytest.mark.parametrize("version", ["2025-11-25", "1", True, 1.0, None, 99])
async def test_initialize_with_an_unsupported_or_non_integer_version_is_answered_1(
    version: object,
) -> None:
    from acpwire.server.methods.advertised import negotiate

    seen: list[int] = []

    class Negotiating(EchoAgent):
        async def initialize(self, params: m.InitializeRequest) -> m.InitializeResponse:
            seen.append(params.protocol_version)
            return m.InitializeResponse(protocol_version=negotiate(params.protocol_version))

    (a_recv, a_send), (c_recv, c_send) = memory_pair()
    agent = AgentConnection(Negotiating, a_recv, a_send)
    params: dict[str, Any] = {} if version is None else {"protocolVersion": version}
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.serve)
        with anyio.fail_after(5):
            msg = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
            await c_send.send(json.dumps(msg).encode() + b"\n")
            buf = b""
            while b"\n" not in buf:
                buf += await c_recv.receive()
        tg.cancel_scope.cancel()
    answer = json.loads(buf.split(b"\n")[0])
    assert answer["result"]["protocolVersion"] == 1
    # Never coerced: a non-integer arrives as "unsupported" (0), an integer as itself.
    assert seen == [99 if version == 99 else 0]
