"""``Notifier.update`` sends plain text chunks as pre-encoded bytes and everything else
through the models; on the wire both are exactly what the models encode."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from acp_v1 import models as m
from acp_v1.peers import ClientPeer
from acpwire.rpc import Connection
from acpwire.rpc.messages import encode_notification
from acpwire.rpc.transport import memory_pair
from acpwire.server.editor.notifier import Notifier

pytestmark = pytest.mark.anyio

SESSION = "sess_n"


class _Nothing:
    """An RPC handler for a connection that only sends."""

    async def on_request(self, method: str, params: object, ctx: object) -> object:
        raise AssertionError(f"unexpected request {method}")

    async def on_notification(self, method: str, params: object) -> None:
        raise AssertionError(f"unexpected notification {method}")


def text(value: str, **extra: Any) -> m.ContentBlockText:
    return m.ContentBlockText(text=value, **extra)


UPDATES: list[Any] = [
    m.SessionUpdateAgentMessageChunk(content=text("plain answer")),
    m.SessionUpdateAgentThoughtChunk(content=text("thinking")),
    m.SessionUpdateUserMessageChunk(content=text("the prompt")),
    m.SessionUpdateAgentMessageChunk(content=text("with id"), message_id="msg_1"),
    m.SessionUpdateAgentMessageChunk(content=text("with meta"), meta={"k": 1}),
    m.SessionUpdateUserMessageChunk(
        content=text("annotated", annotations=m.Annotations(priority=0.5))
    ),
    m.SessionUpdateAgentMessageChunk(
        content=m.ContentBlockImage(data="aGk=", mime_type="image/png")
    ),
    m.SessionUpdatePlan(entries=[]),
]


class CountingPeer(ClientPeer):
    """Records what goes through the models (the fast path bypasses this method)."""

    __slots__ = ("modelled",)

    def __init__(self, out: Connection) -> None:
        super().__init__(out)
        self.modelled: list[Any] = []

    async def session_update(self, params: m.SessionNotification) -> None:
        self.modelled.append(params.update)
        await super().session_update(params)


async def test_every_update_is_on_the_wire_as_the_models_encode_it() -> None:
    (ours_recv, ours_send), (peer_recv, _peer_send) = memory_pair(max_buffer_chunks=1000)
    connection = Connection(ours_recv, ours_send, _Nothing())
    peer = CountingPeer(connection)
    notifier = Notifier(peer)
    with anyio.fail_after(5):
        for update in UPDATES:
            assert await notifier.update(SESSION, update)
        wire = b""
        while wire.count(b"\n") < len(UPDATES):
            wire += await peer_recv.receive()
    lines = wire.splitlines(keepends=True)
    expected = [
        encode_notification(
            "session/update", m.SessionNotification(session_id=SESSION, update=update)
        )
        for update in UPDATES
    ]
    assert lines == expected
    assert peer.modelled == UPDATES[3:]  # the first three are plain text: pre-encoded
