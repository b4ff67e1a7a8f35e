"""``NaN``/``Infinity`` literals reaching a real :class:`ClientConnection` (and an agent's end).

pydantic-core's validators read those literals as floats, and a client's fast path (the
streamed ``session/update``s) used not to search for them: such a line was delivered as
if it were JSON. Every such line is now refused as not JSON (-32700, id ``null``, logged,
nothing delivered), as on an agent's end, while a text that merely holds the word still
takes the fast path.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import pytest

from acp_v1 import models as m
from acp_v1.interfaces import Client
from acp_v1.peers import AgentPeer
from acpwire.link import ClientConnection
from acpwire.link.endpoint import AcpEndpoint
from acpwire.rpc import memory_pair
from acpwire.rpc.messages import Notification

pytestmark = pytest.mark.anyio

HEAD = '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'


def _chunk(text: str, extra: str = "") -> str:
    """A canonical ``session/update`` line (what SDKs write: the decoder's fast path)
    with an agent_message_chunk of ``text``; ``extra`` goes after its content."""
    content = '{"type":"text","text":' + json.dumps(text) + "}"
    return HEAD + '{"sessionUpdate":"agent_message_chunk","content":' + content + extra + "}}}"


LITERALS = [
    _chunk("a", ',"_meta":{"x":NaN}'),
    _chunk("b", ',"_meta":{"x":Infinity}'),
    _chunk("c", ',"_meta":{"x":-Infinity}'),
    _chunk("d", ',"_meta":{"x": NaN , "y":[1, -Infinity]}'),
    _chunk("NaN and Infinity in the text", ',"_meta":{"x":[0,NaN]}'),
    _chunk("e").replace('"sessionId":"s"', '"sessionId":"s","_meta":{"n":NaN}'),
    # Not in canonical order: the envelope path (refused before too).
    _chunk("f", ',"_meta":{"x":Infinity}').replace(
        '"jsonrpc":"2.0","method":"session/update"', '"method":"session/update","jsonrpc":"2.0"'
    ),
]
WORDS = ["NaN is not a number", "to Infinity and beyond", "-Infinity", '"NaN"', "N"]


class Recorder(Client):
    def __init__(self, agent: AgentPeer) -> None:
        self.agent = agent
        self.updates: list[m.SessionNotification] = []

    async def session_update(self, params: m.SessionNotification) -> None:
        self.updates.append(params)


async def _answers_until(receive: Any, msg_id: int) -> list[dict[str, Any]]:
    """The client's answers, up to and including the one to request ``msg_id``."""
    answers: list[dict[str, Any]] = []
    buf = b""
    while not any(a.get("id") == msg_id for a in answers):
        buf += await receive.receive()
        *lines, buf = buf.split(b"\n")
        answers += [json.loads(x) for x in lines if x]
    return answers


async def test_a_client_refuses_every_line_with_a_nan_or_infinity_literal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    (a_recv, a_send), (c_recv, c_send) = memory_pair()
    client = ClientConnection(Recorder, c_recv, c_send)
    request_with_nan = (
        '{"jsonrpc":"2.0","id":5,"method":"fs/read_text_file",'
        '"params":{"sessionId":"s","path":"/x","_meta":{"n":NaN}}}'
    )
    # Not implemented by the client: answered -32601 once it is read as JSON.
    probe = request_with_nan.replace('"id":5', '"id":9').replace(',"_meta":{"n":NaN}', "")
    good = _chunk("NaN is not a number", ',"_meta":{"note":"Infinity"}')
    with caplog.at_level(logging.WARNING, logger="acpwire.rpc"):
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.serve)
            with anyio.fail_after(5):
                for raw in (*LITERALS, request_with_nan, good, probe):
                    await a_send.send(raw.encode() + b"\n")
                answers = await _answers_until(a_recv, 9)
                # The ordered queue may lag the answer; an update wrongly let through
                # would be delivered before the good one (sent after every literal).
                while not client.handler.updates:
                    await anyio.sleep(0.01)
            tg.cancel_scope.cancel()
    refused = [a for a in answers if a.get("id") is None]
    assert [a["error"]["code"] for a in refused] == [-32700] * (len(LITERALS) + 1), answers
    assert [a["error"]["code"] for a in answers if a.get("id") == 9] == [-32601]
    # Only the line without a literal reached the handler, typed, its text intact.
    [delivered] = [u.update for u in client.handler.updates]
    assert isinstance(delivered, m.SessionUpdateAgentMessageChunk)
    assert delivered.content == m.ContentBlockText(text="NaN is not a number")
    assert delivered.meta == {"note": "Infinity"}
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert sum("client:" in w and "message:" in w for w in warnings) == len(LITERALS) + 1


@pytest.mark.parametrize("text", WORDS)
async def test_a_client_streams_text_holding_the_words_on_the_fast_path(text: str) -> None:
    (_, a_send), (c_recv, c_send) = memory_pair()
    client = ClientConnection(Recorder, c_recv, c_send)
    raw = _chunk(text, ',"_meta":{"note":"NaN Infinity"}').encode()
    decoded = client.endpoint.decode(raw)
    # The fast path hands over the params model itself (the general path a dict).
    assert isinstance(decoded, Notification)
    assert isinstance(decoded.params, m.SessionNotification)
    assert client.endpoint._fast, "the fast path learned the prefix"
    async with anyio.create_task_group() as tg:
        tg.start_soon(client.serve)
        with anyio.fail_after(5):
            await a_send.send(raw + b"\n")
            while not client.handler.updates:
                await anyio.sleep(0.01)
        tg.cancel_scope.cancel()
    assert client.handler.updates[0].update.content.text == text  # type: ignore[union-attr]


def test_an_agent_keeps_a_word_in_a_string_on_the_fast_path_and_refuses_a_literal() -> None:
    class Agent:
        async def session_cancel(self, params: m.CancelNotification) -> None: ...

    ep = AcpEndpoint("agent", Agent())
    cancel = '{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s","_meta":%s}}'
    word = ep.decode((cancel % '{"why":"NaN, Infinity"}').encode())
    assert isinstance(word, Notification) and isinstance(word.params, m.CancelNotification)
    assert word.params.meta == {"why": "NaN, Infinity"}
    for literal in ('{"why":NaN}', '{"why":[Infinity]}', '{"why": -Infinity}'):
        refused = ep.decode((cancel % literal).encode())
        assert not isinstance(refused, Notification), literal
        assert refused.error.code == -32700  # type: ignore[union-attr]
