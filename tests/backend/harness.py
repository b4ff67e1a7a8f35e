"""An in-memory editor for backend tests: a real ACP client over memory streams.

``EditorClient`` implements the client side of ACP with the generated interfaces: it
records every ``session/update`` per session, answers permission requests by a policy
the test sets, and serves ``fs/*`` from a dict of unsaved buffers over the disk.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from acp_v1 import models as m
from acp_v1.interfaces import Client
from acp_v1.peers import AgentPeer
from acpwire.config import Settings
from acpwire.link import ClientConnection
from acpwire.rpc import memory_pair
from acpwire.server.app import Runtime, serve
from acpwire.server.mcp import McpHost


@dataclass
class PermissionPolicy:
    """How the editor answers ``session/request_permission``: an option id,
    ``"cancelled"``, or ``None`` to never answer (to test timeouts)."""

    answer: str | None = "allow_once"
    requests: list[m.RequestPermissionRequest] = field(default_factory=list)


class EditorClient(Client):
    def __init__(self, agent: AgentPeer) -> None:
        self.agent = agent
        self.updates: dict[str, list[Any]] = defaultdict(list)
        self.policy = PermissionPolicy()
        self.buffers: dict[str, str] = {}
        self.writes: list[tuple[str, str]] = []
        self.update_event = anyio.Event()

    async def session_update(self, params: m.SessionNotification) -> None:
        self.updates[params.session_id].append(params.update)
        self.update_event.set()
        self.update_event = anyio.Event()

    async def session_request_permission(
        self, params: m.RequestPermissionRequest
    ) -> m.RequestPermissionResponse:
        self.policy.requests.append(params)
        answer = self.policy.answer
        if answer is None:
            await anyio.sleep_forever()
        if answer == "cancelled":
            return m.RequestPermissionResponse(outcome=m.RequestPermissionOutcomeCancelled())
        return m.RequestPermissionResponse(outcome=m.SelectedPermissionOutcome(option_id=answer))

    async def fs_read_text_file(self, params: m.ReadTextFileRequest) -> m.ReadTextFileResponse:
        if params.path in self.buffers:
            return m.ReadTextFileResponse(content=self.buffers[params.path])
        return m.ReadTextFileResponse(content=Path(params.path).read_text())

    async def fs_write_text_file(self, params: m.WriteTextFileRequest) -> m.WriteTextFileResponse:
        self.writes.append((params.path, params.content))
        Path(params.path).write_text(params.content)
        return m.WriteTextFileResponse()

    def kinds(self, session_id: str) -> list[str]:
        return [u.session_update for u in self.updates[session_id]]

    def text(self, session_id: str, kind: str = "agent_message_chunk") -> str:
        return "".join(
            u.content.text
            for u in self.updates[session_id]
            if u.session_update == kind and hasattr(u.content, "text")
        )


class NoMcp(McpHost):
    """Refuses every MCP server (for tests that do not exercise MCP)."""

    supports_http = False
    supports_sse = False

    async def start(self, state: Any, servers: list[m.McpServer]) -> list[tuple[str, str]]:
        return [(getattr(s, "name", "?"), "MCP disabled in this test") for s in servers]

    async def stop(self, state: Any) -> None:
        return None

    async def shutdown(self) -> None:
        return None

    async def __aenter__(self) -> NoMcp:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None


def make_settings(home: Path, base_url: str | None, *, approval_timeout: float = 5.0) -> Settings:
    values: dict[str, Any] = {"model": "fake-model", "context_window": 32768}
    if base_url:
        values["base_url"] = base_url
    return Settings(home=home, file_values=values, approval_timeout_s=approval_timeout, workers=32)


@asynccontextmanager
async def connected(
    runtime: Runtime, *, mcp: McpHost | None = None
) -> AsyncIterator[ClientConnection[EditorClient]]:
    """A connected editor (initialized) talking to a backend over memory streams."""
    (a_recv, a_send), (c_recv, c_send) = memory_pair()
    client = ClientConnection(EditorClient, c_recv, c_send)
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: serve(runtime, a_recv, a_send, mcp=mcp or NoMcp()))
        tg.start_soon(client.serve)
        caps = m.ClientCapabilities(
            fs=m.FileSystemCapabilities(read_text_file=True, write_text_file=True)
        )
        with anyio.fail_after(10):
            await client.peer.initialize(
                m.InitializeRequest(
                    protocol_version=1,
                    client_capabilities=caps,
                    client_info=m.Implementation(name="test-editor", version="1.0"),
                )
            )
        yield client
        tg.cancel_scope.cancel()
