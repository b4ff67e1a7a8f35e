"""Wire a typed agent or client to a byte stream pair: the ACP connection objects.

``AgentConnection`` is an agent's end: it serves the agent's methods and gives the agent
a typed :class:`acp_v1.peers.ClientPeer` to call the client (``session/update``,
``fs/*``, ``terminal/*``, ``session/request_permission``). ``ClientConnection`` is the
mirror image for a client driving an agent. Both run until the stream ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from anyio.abc import ByteReceiveStream, ByteSendStream

from acp_v1.peers import AgentPeer, ClientPeer

from .endpoint import AcpEndpoint, ExtensionHandler, Role
from .rpc import DEFAULT_MAX_LINE_BYTES, Connection

H = TypeVar("H")
P = TypeVar("P", AgentPeer, ClientPeer)


class _Link(Generic[H, P]):
    role: Role
    peer_type: type[P]

    def __init__(
        self,
        make_handler: Callable[[P], H],
        receive: ByteReceiveStream,
        send: ByteSendStream,
        *,
        unstable: bool = False,
        extensions: ExtensionHandler | None = None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        self.endpoint = AcpEndpoint(self.role, unstable=unstable, extensions=extensions)
        self.connection = Connection(
            receive,
            send,
            self.endpoint,
            max_line_bytes=max_line_bytes,
            decode=self.endpoint.decode,
            name=self.role,
        )
        self.peer: P = self.peer_type(self.connection)
        self.handler: H = make_handler(self.peer)
        self.endpoint.bind(self.handler)

    async def serve(self) -> None:
        """Serve until the peer closes the stream."""
        await self.connection.serve()

    async def close(self) -> None:
        await self.connection.close()


class AgentConnection(_Link[H, ClientPeer]):
    """An agent's end of a connection; ``peer`` is the client."""

    role: Role = "agent"
    peer_type = ClientPeer


class ClientConnection(_Link[H, AgentPeer]):
    """A client's end of a connection; ``peer`` is the agent."""

    role: Role = "client"
    peer_type = AgentPeer
