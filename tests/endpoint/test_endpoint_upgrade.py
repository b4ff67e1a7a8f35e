"""``AcpEndpoint.upgrade_with``: a light handler first, the full one built on demand."""

from __future__ import annotations

import anyio
import pytest

from acp_v1 import models as m
from acp_v1.interfaces import Agent
from acp_v1.peers import ClientPeer
from acpwire.link import AgentConnection, ClientConnection
from acpwire.rpc import RpcError, memory_pair
from tests.endpoint.test_link import EchoAgent, RecordingClient

pytestmark = pytest.mark.anyio


class InitializeOnly(Agent):
    def __init__(self, client: ClientPeer) -> None:
        self.client = client

    async def initialize(self, params: m.InitializeRequest) -> m.InitializeResponse:
        return m.InitializeResponse(protocol_version=1)


class Upgrades:
    """Counts builds; the first ``failures`` builds raise."""

    def __init__(self, agent: AgentConnection[InitializeOnly], failures: int = 0) -> None:
        self.agent = agent
        self.failures = failures
        self.builds = 0
        self.gate = anyio.Event()

    async def build(self) -> EchoAgent:
        self.builds += 1
        await self.gate.wait()
        if self.builds <= self.failures:
            raise RuntimeError("the backend could not be built")
        return EchoAgent(self.agent.peer)


async def _serve(failures: int = 0):  # type: ignore[no-untyped-def]
    (a_recv, a_send), (c_recv, c_send) = memory_pair()
    agent = AgentConnection(InitializeOnly, a_recv, a_send)
    client = ClientConnection(RecordingClient, c_recv, c_send)
    upgrades = Upgrades(agent, failures)
    agent.endpoint.upgrade_with(upgrades.build)
    return agent, client, upgrades


async def test_methods_wait_for_one_upgrade_then_reach_the_new_handler() -> None:
    agent, client, upgrades = await _serve()
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.serve)
        tg.start_soon(client.serve)
        with anyio.fail_after(5):
            # The light handler answers at once; no upgrade is needed for it.
            await client.peer.initialize(m.InitializeRequest(protocol_version=1))
            assert upgrades.builds == 0
            answers: list[str] = []

            async def new_session() -> None:
                request = m.NewSessionRequest(cwd="/tmp", mcp_servers=[])
                answers.append((await client.peer.session_new(request)).session_id)

            async with anyio.create_task_group() as calls:
                for _ in range(3):
                    calls.start_soon(new_session)
                await anyio.wait_all_tasks_blocked()
                assert answers == [] and upgrades.builds == 1  # all three wait for it
                upgrades.gate.set()
            assert answers == ["s-1", "s-1", "s-1"] and upgrades.builds == 1
            # A notification is delivered to the new handler too, and nothing rebuilds.
            await client.peer.session_cancel(m.CancelNotification(session_id="s-1"))
            await anyio.wait_all_tasks_blocked()
            assert agent.endpoint.implements("session/prompt") and upgrades.builds == 1
        tg.cancel_scope.cancel()


async def test_a_failed_upgrade_is_an_internal_error_and_is_tried_again() -> None:
    agent, client, upgrades = await _serve(failures=1)
    upgrades.gate.set()
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.serve)
        tg.start_soon(client.serve)
        with anyio.fail_after(5):
            request = m.NewSessionRequest(cwd="/tmp", mcp_servers=[])
            with pytest.raises(RpcError) as info:
                await client.peer.session_new(request)
            assert info.value.code == -32603
            assert (await client.peer.session_new(request)).session_id == "s-1"
            assert upgrades.builds == 2
        tg.cancel_scope.cancel()


async def test_methods_nobody_implements_still_answer_method_not_found() -> None:
    agent, client, upgrades = await _serve()
    upgrades.gate.set()
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.serve)
        tg.start_soon(client.serve)
        with anyio.fail_after(5), pytest.raises(RpcError) as info:
            await client.peer.session_list(m.ListSessionsRequest())
        assert info.value.code == -32601 and upgrades.builds == 1
        tg.cancel_scope.cancel()
