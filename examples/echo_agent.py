"""Quickstart agent on the typed bindings: echoes each prompt back, word by word.

    python examples/echo_agent.py          # speaks ACP on stdin/stdout

What it shows: a handler class built from the client's typed peer; streamed
``session/update``s; an error with a JSON-RPC code (an empty prompt is -32602, an unknown
session -32002); ``session/cancel`` ending a prompt with ``cancelled``; an extension
method on the handler (``@ext_method("_echo/count")``). Every method the class does not
implement answers -32601; a misspelled one is refused when the handler is bound.
"""

from __future__ import annotations

import uuid

import anyio

from acp_v1 import PROTOCOL_VERSION, Agent, ClientPeer, models as m
from acpwire import (
    AgentConnection,
    ext_method,
    invalid_params,
    resource_not_found,
    stdio_streams,
    text_chunk,
)

WORD_DELAY_S = 0.05
"""Pause between streamed words (so that a cancel can arrive mid-prompt)."""


class EchoAgent(Agent):
    """One instance per connection; ``client`` calls the editor's side."""

    def __init__(self, client: ClientPeer) -> None:
        self.client = client
        self.sessions: dict[str, anyio.Event] = {}
        """Per session: set by ``session/cancel`` to stop the running prompt."""
        self.prompts = 0

    async def initialize(self, params: m.InitializeRequest) -> m.InitializeResponse:
        return m.InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_info=m.Implementation(name="echo", version="1.0"),
        )

    async def session_new(self, params: m.NewSessionRequest) -> m.NewSessionResponse:
        session_id = uuid.uuid4().hex
        self.sessions[session_id] = anyio.Event()
        return m.NewSessionResponse(session_id=session_id)

    async def session_prompt(self, params: m.PromptRequest) -> m.PromptResponse:
        if params.session_id not in self.sessions:
            raise resource_not_found(f"session {params.session_id}")  # -32002
        text = " ".join(b.text for b in params.prompt if isinstance(b, m.ContentBlockText))
        if not text.strip():
            raise invalid_params("the prompt has no text")  # -32602
        self.prompts += 1
        cancelled = self.sessions[params.session_id] = anyio.Event()
        for word in text.split():
            if cancelled.is_set():
                return m.PromptResponse(stop_reason="cancelled")
            await self.client.session_update(text_chunk(params.session_id, word + " "))
            await anyio.sleep(WORD_DELAY_S)
        return m.PromptResponse(stop_reason="end_turn")

    async def session_cancel(self, params: m.CancelNotification) -> None:
        if params.session_id in self.sessions:
            self.sessions[params.session_id].set()

    @ext_method("_echo/count")  # the wire name, underscore included
    async def count(self, params: object) -> dict[str, int]:
        return {"prompts": self.prompts}


def connect(
    receive: anyio.abc.ByteReceiveStream, send: anyio.abc.ByteSendStream
) -> AgentConnection[EchoAgent]:
    """The agent's end of a connection over any byte stream pair."""
    return AgentConnection(EchoAgent, receive, send)


async def main() -> None:
    async with stdio_streams() as (receive, send):
        await connect(receive, send).serve()


if __name__ == "__main__":
    anyio.run(main)
