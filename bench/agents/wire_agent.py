"""The same minimal agent on acpwire: generated interfaces + ``AgentConnection`` on stdio.

``session/prompt`` with the text ``"N"`` streams N ``agent_message_chunk`` updates through
the typed client peer, then answers ``end_turn``.
"""

from __future__ import annotations

import anyio

from acp_v1 import PROTOCOL_VERSION, models as m
from acp_v1.interfaces import Agent
from acp_v1.peers import ClientPeer
from acpwire.link import AgentConnection
from acpwire.rpc import stdio_streams


class StreamAgent(Agent):
    def __init__(self, client: ClientPeer) -> None:
        self._client = client
        self._sessions = 0

    async def initialize(self, params: m.InitializeRequest) -> m.InitializeResponse:
        return m.InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=m.AgentCapabilities(),
            agent_info=m.Implementation(name="bench-wire-agent", version="0.0.0"),
        )

    async def session_new(self, params: m.NewSessionRequest) -> m.NewSessionResponse:
        self._sessions += 1
        return m.NewSessionResponse(session_id=f"wire-{self._sessions}")

    async def session_prompt(self, params: m.PromptRequest) -> m.PromptResponse:
        text = "".join(b.text for b in params.prompt if isinstance(b, m.ContentBlockText))
        for i in range(int(text)):
            chunk = m.ContentBlockText(text=f"token {i} of the streamed answer ")
            await self._client.session_update(
                m.SessionNotification(
                    session_id=params.session_id,
                    update=m.SessionUpdateAgentMessageChunk(content=chunk),
                )
            )
        return m.PromptResponse(stop_reason="end_turn")


async def main() -> None:
    async with stdio_streams() as (receive, send):
        await AgentConnection(StreamAgent, receive, send).serve()


if __name__ == "__main__":
    anyio.run(main)
