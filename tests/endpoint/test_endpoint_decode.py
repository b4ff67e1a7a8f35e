"""``AcpEndpoint.decode`` and ``on_notification``: the fast path for streamed
notifications must give exactly what the general path gives, and step aside for
anything it does not fully understand."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from acp_v1 import models as m
from acpwire.link.endpoint import AcpEndpoint
from acpwire.rpc.messages import Notification, Request

HEAD = b'{"jsonrpc":"2.0","method":"session/update","params":'


def chunk(text: str, session: str = "sess_1") -> dict[str, Any]:
    return {
        "sessionId": session,
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text},
        },
    }


def line(method: str, params: object, **extra: object) -> bytes:
    return (
        json.dumps({"jsonrpc": "2.0", "method": method, "params": params, **extra})
        .replace(", ", ",")
        .replace(": ", ":")
        .encode()
    )


class Recorder:
    """A client handler that keeps what reaches it."""

    def __init__(self) -> None:
        self.updates: list[m.SessionNotification] = []
        self.statuses: list[object] = []

    async def session_update(self, params: m.SessionNotification) -> None:
        self.updates.append(params)

    async def auth_status_update(self, params: object) -> None:
        self.statuses.append(params)


def test_canonical_notification_decodes_to_the_typed_params() -> None:
    ep = AcpEndpoint("client", Recorder())
    raw = line("session/update", chunk("hello"))
    assert raw.startswith(HEAD)
    msg = ep.decode(raw)
    assert isinstance(msg, Notification) and msg.method == "session/update"
    assert msg.params == m.SessionNotification.model_validate(chunk("hello"))
    assert len(ep._fast) == 1  # it took the fast path, which now knows this prefix


def test_a_stream_that_switches_methods_decodes_every_line() -> None:
    ep = AcpEndpoint("client", Recorder(), unstable=True)
    cancel = line("$/cancel_request", {"requestId": 4})
    lines = [line("session/update", chunk(f"t{i}")) for i in range(3)]
    decoded = [ep.decode(x) for x in (lines[0], cancel, lines[1], cancel, lines[2])]
    assert [d.method for d in decoded if isinstance(d, Notification)] == [
        "session/update",
        "$/cancel_request",
        "session/update",
        "$/cancel_request",
        "session/update",
    ]
    texts = [d.params.update.content.text for d in decoded[::2]]  # type: ignore[union-attr]
    assert texts == ["t0", "t1", "t2"]


def test_keys_after_params_are_not_cut_off() -> None:
    # Same prefix as a notification, but an id follows params: it is a request (which
    # the client side then answers -32601), never a notification that loses its id.
    ep = AcpEndpoint("client", Recorder())
    ep.decode(line("session/update", chunk("warm")))  # the fast path knows this prefix
    msg = ep.decode(line("session/update", chunk("x"), id=3))
    assert isinstance(msg, Request) and msg.id == 3


@pytest.mark.parametrize("tail", [b" ", b"\t", b"\r", b"  \r"])
def test_trailing_whitespace_still_decodes(tail: bytes) -> None:
    ep = AcpEndpoint("client", Recorder())
    ep.decode(line("session/update", chunk("warm")))
    msg = ep.decode(line("session/update", chunk("spaced")) + tail)
    assert isinstance(msg, Notification)
    assert isinstance(msg.params, m.SessionNotification)
    assert msg.params.update.content.text == "spaced"  # type: ignore[union-attr]


def test_invalid_params_take_the_general_path_and_are_dropped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    recorder = Recorder()
    ep = AcpEndpoint("client", recorder)
    ep.decode(line("session/update", chunk("warm")))
    msg = ep.decode(line("session/update", {"sessionId": 5}))
    assert isinstance(msg, Notification) and msg.params == {"sessionId": 5}
    with caplog.at_level(logging.WARNING, logger="acpwire.link.endpoint"):
        _run(ep.on_notification(msg.method, msg.params))
    assert recorder.updates == []
    assert "dropped invalid session/update notification" in caplog.text


def test_unknown_method_with_the_canonical_head_is_not_remembered() -> None:
    ep = AcpEndpoint("client", Recorder())
    for i in range(3):
        msg = ep.decode(line(f"made/up{i}", {"a": i}))
        assert isinstance(msg, Notification) and msg.params == {"a": i}
    assert ep._fast == {}  # a peer cannot grow the cache with names it invents


def test_notifications_reach_the_handler_typed_whichever_path_decoded_them() -> None:
    recorder = Recorder()
    ep = AcpEndpoint("client", recorder)
    fast = ep.decode(line("session/update", chunk("fast")))
    assert isinstance(fast, Notification)
    _run(ep.on_notification(fast.method, fast.params))
    _run(ep.on_notification("session/update", chunk("dict")))  # e.g. from the general path
    assert [u.update.content.text for u in recorder.updates] == ["fast", "dict"]  # type: ignore[union-attr]
    assert all(isinstance(u, m.SessionNotification) for u in recorder.updates)


def test_rebinding_the_handler_reroutes_notifications() -> None:
    first, second = Recorder(), Recorder()
    ep = AcpEndpoint("client", first)
    _run(ep.on_notification("session/update", chunk("a")))
    ep.bind(second)
    _run(ep.on_notification("session/update", chunk("b")))
    assert [len(first.updates), len(second.updates)] == [1, 1]


def test_unimplemented_and_unknown_notifications_are_ignored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class NoUpdates:
        pass

    ep = AcpEndpoint("client", NoUpdates())
    with caplog.at_level(logging.INFO, logger="acpwire.link.endpoint"):
        _run(ep.on_notification("session/update", chunk("x")))
        _run(ep.on_notification("no/such", {}))
    assert "ignored notification 'session/update': not implemented" in caplog.text
    assert "ignored unknown notification 'no/such'" in caplog.text


def _run(coro: Any) -> None:
    """Drive a coroutine that never suspends (the handlers here do not)."""
    try:
        coro.send(None)
    except StopIteration:
        return
    raise AssertionError("the coroutine suspended")


def test_requests_decode_through_their_lazily_loaded_envelope() -> None:
    ep = AcpEndpoint("agent", object())
    raw = b'{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":1}}'
    msg = ep.decode(raw)
    assert isinstance(msg, Request) and msg.id == 3 and msg.method == "initialize"
    assert msg.params == m.InitializeRequest(protocol_version=1)


def test_a_method_name_that_is_not_utf8_takes_the_general_path() -> None:
    from acpwire.rpc.messages import InvalidMessage

    ep = AcpEndpoint("agent", object())
    msg = ep.decode(b'{"jsonrpc":"2.0","id":4,"method":"sess\xffion/new","params":{}}')
    assert isinstance(msg, InvalidMessage) and msg.error.code == -32700
    assert "not valid UTF-8" in msg.error.message
