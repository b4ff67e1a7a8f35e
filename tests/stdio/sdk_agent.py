"""An ACP agent built on the official SDK (``acp`` 0.12.1), run as a child by the stdio tests.

``python tests/stdio/sdk_agent.py`` serves ACP on stdin/stdout through ``acp.run_agent``.
A prompt streams two ``agent_message_chunk`` updates, ``"echo: "`` and the prompt's
text, then ends the turn. A prompt ``read <path>`` first reads that file through the
client (``fs/read_text_file``) and streams its content instead. It imports only the SDK
so it runs as a plain script.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import sys
from typing import Any, cast

from acp import run_agent, update_agent_message_text
from acp.interfaces import Agent, Client
from acp.schema import (
    AcpMcpServer,
    AgentCapabilities,
    AudioContentBlock,
    ClientCapabilities,
    EmbeddedResourceContentBlock,
    HttpMcpServer,
    ImageContentBlock,
    Implementation,
    InitializeResponse,
    McpServerStdio,
    NewSessionResponse,
    PromptResponse,
    ResourceContentBlock,
    SseMcpServer,
    TextContentBlock,
)

AGENT_NAME = "sdk-echo-agent"

PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)
McpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio


class EchoAgent:
    """Duck-typed on purpose: for a method it lacks, the SDK then answers ``-32601``
    (a subclass of the SDK's ``Agent`` Protocol would answer ``null`` instead)."""

    def __init__(self) -> None:
        self._client: Client | None = None
        self._ids = itertools.count(1)

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=min(protocol_version, 1),
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(name=AGENT_NAME, version="1.0"),
        )

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        return NewSessionResponse(session_id=f"sdk-session-{next(self._ids)}")

    async def prompt(
        self, session_id: str, prompt: list[PromptBlock], **kwargs: Any
    ) -> PromptResponse:
        assert self._client is not None, "on_connect was not called"
        text = "".join(block.text for block in prompt if isinstance(block, TextContentBlock))
        if text.startswith("read "):
            read = await self._client.read_text_file(session_id=session_id, path=text[5:])
            chunks = ["file: ", read.content]
        else:
            chunks = ["echo: ", text]
        for chunk in chunks:
            await self._client.session_update(session_id, update_agent_message_text(chunk))
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None


def main() -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    asyncio.run(run_agent(cast(Agent, EchoAgent())))


if __name__ == "__main__":
    main()
