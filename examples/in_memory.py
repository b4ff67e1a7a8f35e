"""Testing an agent in memory: the echo agent and a client over ``memory_pair()``.

    python examples/in_memory.py            # or call check() from a test

No process and no pipe: both ends of a real connection (framing, JSON-RPC, validation)
run in one event loop, so a test drives the agent exactly as an editor would.
"""

from __future__ import annotations

from pathlib import Path

import anyio

from acp_v1 import AgentPeer, Client, models as m
from acpwire import ClientConnection, RpcError, memory_pair

from echo_agent import connect  # the example next to this one


class Recorder(Client):
    def __init__(self, agent: AgentPeer) -> None:
        self.agent = agent
        self.updates: list[m.SessionUpdate] = []

    async def session_update(self, params: m.SessionNotification) -> None:
        self.updates.append(params.update)


async def check() -> list[str]:
    """Run one conversation and return the streamed words (raises on a broken agent)."""
    (agent_in, agent_out), (client_in, client_out) = memory_pair()
    agent = connect(agent_in, agent_out)
    client = ClientConnection(Recorder, client_in, client_out)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.serve)
        tg.start_soon(client.serve)
        peer = client.peer
        await peer.initialize(m.InitializeRequest(protocol_version=1))
        session = await peer.session_new(m.NewSessionRequest(cwd=str(Path.cwd()), mcp_servers=[]))
        request = m.PromptRequest(
            session_id=session.session_id, prompt=[m.ContentBlockText(text="one two three")]
        )
        answer = await peer.session_prompt(request)
        assert answer.stop_reason == "end_turn"
        try:
            await peer.session_prompt(request.model_copy(update={"session_id": "nope"}))
            raise AssertionError("an unknown session must be refused")
        except RpcError as exc:
            assert exc.code == -32002
        tg.cancel_scope.cancel()
    return [
        u.content.text.strip()
        for u in client.handler.updates
        if isinstance(u, m.SessionUpdateAgentMessageChunk)
        and isinstance(u.content, m.ContentBlockText)
    ]


if __name__ == "__main__":
    words = anyio.run(check)
    assert words == ["one", "two", "three"], words
    print("in-memory check passed:", " ".join(words))
