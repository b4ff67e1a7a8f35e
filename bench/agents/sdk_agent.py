"""A minimal agent on the official SDK, written the way its examples are (run as a script).

``session/prompt`` with the text ``"N"`` streams N ``agent_message_chunk`` updates through
``AgentSideConnection.session_update``, then answers ``end_turn``.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from acp import (
    PROTOCOL_VERSION,
    Agent,
    Client,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    run_agent,
    update_agent_message_text,
)
from acp.schema import (
    AcpMcpServer,
    AgentCapabilities,
    AudioContentBlock,
    ClientCapabilities,
    EmbeddedResourceContentBlock,
    HttpMcpServer,
    ImageContentBlock,
    Implementation,
    McpServerStdio,
    ResourceContentBlock,
    SseMcpServer,
    TextContentBlock,
)


class StreamAgent:
    def __init__(self) -> None:
        self._conn: Client | None = None
        self._sessions = 0

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(name="bench-sdk-agent", version="0.0.0"),
        )

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio]
        | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        self._sessions += 1
        return NewSessionResponse(session_id=f"sdk-{self._sessions}")

    async def prompt(
        self,
        session_id: str,
        prompt: list[
            TextContentBlock
            | ImageContentBlock
            | AudioContentBlock
            | ResourceContentBlock
            | EmbeddedResourceContentBlock
        ],
        **kwargs: Any,
    ) -> PromptResponse:
        assert self._conn is not None
        text = "".join(b.text for b in prompt if isinstance(b, TextContentBlock))
        for i in range(int(text)):
            update = update_agent_message_text(f"token {i} of the streamed answer ")
            await self._conn.session_update(session_id, update)
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    # Duck-typed, not a subclass of the Agent Protocol: the SDK then answers -32601 for
    # the methods left out instead of a null result (reference §2.7).
    asyncio.run(run_agent(cast(Agent, StreamAgent())))
