"""Our own requests and notifications: correlation, ordering, cancellation, closing.

Either two real ``Connection``s talk over ``memory_pair()``, or the test plays the peer
with raw NDJSON so the exact bytes we emit can be checked.
"""

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from anyio.abc import ByteSendStream
from pydantic import BaseModel, ConfigDict, Field

from acpwire.rpc import (
    Connection,
    ConnectionClosedError,
    LineReader,
    RequestContext,
    RpcError,
    memory_pair,
    method_not_found,
)

pytestmark = pytest.mark.anyio

Json = dict[str, Any]


@dataclass
class Peer:
    """Handler used on both ends of a Connection pair."""

    notes: list[object] = field(default_factory=list)
    gates: dict[str, anyio.Event] = field(default_factory=dict)
    arrived: dict[str, anyio.Event] = field(default_factory=dict)
    last_note_reached: anyio.Event = field(default_factory=anyio.Event)
    release_last_note: anyio.Event | None = None
    errors: list[BaseException] = field(default_factory=list)
    asked_back: anyio.Event = field(default_factory=anyio.Event)
    connection: Connection | None = None

    async def on_request(self, method: str, params: object, ctx: RequestContext) -> object:
        if method == "echo":
            return params
        if method == "wait_for":
            assert isinstance(params, dict)
            self.arrived.setdefault(params["gate"], anyio.Event()).set()
            await self.gates.setdefault(params["gate"], anyio.Event()).wait()
            return params["gate"]
        if method == "burst":
            assert isinstance(params, dict)
            for i in range(params["count"]):
                await ctx.connection.notify("note", [i])
            return "burst done"
        raise method_not_found(method)

    async def on_notification(self, method: str, params: object) -> None:
        if method == "note":
            for _ in range(3):  # a handler that awaits must still not be overtaken
                await anyio.sleep(0)
            if params == [9_999] and self.release_last_note is not None:
                self.last_note_reached.set()
                await self.release_last_note.wait()
            self.notes.append(params)
        elif method == "ask_back":
            assert self.connection is not None
            try:
                await self.connection.request("echo", [1])
            except RuntimeError as exc:
                self.errors.append(exc)
            self.asked_back.set()


@asynccontextmanager
async def pair() -> AsyncIterator[tuple[Connection, Connection, Peer, Peer]]:
    (a_recv, a_send), (b_recv, b_send) = memory_pair()
    client_peer, server_peer = Peer(), Peer()
    client = Connection(a_recv, a_send, client_peer, name="client")
    server = Connection(b_recv, b_send, server_peer, name="server")
    client_peer.connection, server_peer.connection = client, server
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.serve)
            tg.start_soon(server.serve)
            yield client, server, client_peer, server_peer
            await client.close()
            await server.close()


@dataclass
class RawServer:
    lines: LineReader
    send: ByteSendStream

    async def read(self) -> Json:
        line = await self.lines.__anext__()
        assert isinstance(line, bytes)
        msg = json.loads(line)
        assert isinstance(msg, dict)
        return msg

    async def write(self, msg: Json) -> None:
        await self.send.send(json.dumps({"jsonrpc": "2.0", **msg}).encode() + b"\n")


@asynccontextmanager
async def client_with_raw_server(
    peer: Peer | None = None,
) -> AsyncIterator[tuple[Connection, RawServer]]:
    (a_recv, a_send), (b_recv, b_send) = memory_pair()
    client = Connection(a_recv, a_send, peer or Peer(), name="client")
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.serve)
            yield client, RawServer(LineReader(b_recv), b_send)
            await client.close()
            await b_recv.aclose()
            await b_send.aclose()


class Update(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    session_id: str = Field(alias="sessionId")
    text: str
    title: str | None = None


async def test_request_and_notify_between_two_connections() -> None:
    async with pair() as (client, server, _client_peer, server_peer):
        assert await client.request("echo", {"k": [1, 2]}) == {"k": [1, 2]}
        assert await server.request("echo", ["back"]) == ["back"]
        await client.notify("note", {"text": "hello"})
        assert await client.request("echo") is None  # answered after the note was read
        assert server_peer.notes == [{"text": "hello"}]
        with pytest.raises(TypeError, match="params must be"):
            await client.notify("note", "not structured")
        with pytest.raises(RpcError) as info:
            await client.request("nope")
        assert (info.value.code, info.value.data) == (-32601, {"method": "nope"})


async def test_concurrent_requests_answered_out_of_order() -> None:
    async with pair() as (client, _, _, server_peer):
        gates = ["a", "b", "c", "d"]
        results: dict[str, object] = {}
        answered = {gate: anyio.Event() for gate in gates}
        server_peer.arrived = {gate: anyio.Event() for gate in gates}
        server_peer.gates = {gate: anyio.Event() for gate in gates}

        async def ask(gate: str) -> None:
            results[gate] = await client.request("wait_for", {"gate": gate})
            answered[gate].set()

        async with anyio.create_task_group() as tg:
            for gate in gates:
                tg.start_soon(ask, gate)
            for gate in reversed(gates):  # the server answers the last request first
                await server_peer.arrived[gate].wait()
                server_peer.gates[gate].set()
                await answered[gate].wait()
                assert list(results) == gates[gates.index(gate) :][::-1]
        assert results == {gate: gate for gate in gates}


async def test_raw_responses_out_of_order_and_error_response() -> None:
    async with client_with_raw_server() as (client, raw):
        results: list[object] = []

        async def ask(value: str) -> None:
            try:
                results.append(await client.request("m", [value]))
            except RpcError as exc:
                results.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "first")
            first = await raw.read()
            tg.start_soon(ask, "second")
            second = await raw.read()
            assert (first["params"], second["params"]) == (["first"], ["second"])
            assert first["id"] != second["id"]
            await raw.write({"id": second["id"], "result": "answer to second"})
            await raw.write(
                {"id": first["id"], "error": {"code": -32002, "message": "gone", "data": 1}}
            )
        assert results[0] == "answer to second"
        assert isinstance(results[1], RpcError)
        assert (results[1].code, results[1].message, results[1].data) == (-32002, "gone", 1)


async def test_response_waits_for_ten_thousand_earlier_notifications() -> None:
    async with pair() as (client, _, client_peer, _):
        assert await client.request("burst", {"count": 10_000}) == "burst done"
        assert client_peer.notes == [[i] for i in range(10_000)]


async def test_response_is_held_back_while_an_earlier_notification_is_in_progress() -> None:
    peer = Peer(release_last_note=anyio.Event())
    async with client_with_raw_server(peer) as (client, raw):
        outcome: list[object] = []

        async def ask() -> None:
            outcome.append(await client.request("work"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            req = await raw.read()
            notes = b"".join(
                b'{"jsonrpc":"2.0","method":"note","params":[%d]}\n' % i for i in range(10_000)
            )
            await raw.send.send(notes)
            await raw.write({"id": req["id"], "result": "done"})
            await peer.last_note_reached.wait()
            await anyio.wait_all_tasks_blocked()
            assert outcome == []  # the response arrived, but note 9999 is still being handled
            assert peer.release_last_note is not None
            peer.release_last_note.set()
        assert outcome == ["done"]
        assert peer.notes == [[i] for i in range(10_000)]


async def test_cancelled_request_sends_cancel_request_and_forgets_the_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="acpwire.rpc")
    async with client_with_raw_server() as (client, raw):
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.request, "slow", {"n": 1})
            req = await raw.read()
            tg.cancel_scope.cancel()
        cancel = await raw.read()
        assert cancel == {
            "jsonrpc": "2.0",
            "method": "$/cancel_request",
            "params": {"requestId": req["id"]},
        }
        await raw.write({"id": req["id"], "result": "too late"})
        # The next request still works, and the late answer was logged as unknown.
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.request, "ping")
            nxt = await raw.read()
            await raw.write({"id": nxt["id"], "result": None})
    assert any(f"unknown request id {req['id']}" in r.getMessage() for r in caplog.records)


async def test_timeout_raises_and_sends_cancel_request() -> None:
    async with client_with_raw_server() as (client, raw):
        with pytest.raises(TimeoutError):
            await client.request("slow", [], timeout=0.05)
        req = await raw.read()
        assert await raw.read() == {
            "jsonrpc": "2.0",
            "method": "$/cancel_request",
            "params": {"requestId": req["id"]},
        }


async def test_eof_fails_pending_requests() -> None:
    (a_recv, a_send), (b_recv, b_send) = memory_pair()
    client = Connection(a_recv, a_send, Peer())
    failures: list[ConnectionClosedError] = []

    async def ask() -> None:
        try:
            await client.request("never_answered")
        except ConnectionClosedError as exc:
            failures.append(exc)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.serve)
            tg.start_soon(ask)
            await LineReader(b_recv).__anext__()  # the request went out
            await b_send.aclose()  # the peer's output ends
    assert len(failures) == 1 and failures[0].message == "Connection closed"
    with pytest.raises(ConnectionClosedError):
        await client.request("after_eof")
    await client.notify("still_writable")  # our output side is still open
    assert await LineReader(b_recv).__anext__() == b'{"jsonrpc":"2.0","method":"still_writable"}'
    await client.close()
    await b_recv.aclose()
    with pytest.raises(ConnectionClosedError):
        await client.notify("after_close")


async def test_close_fails_pending_requests_and_stops_serve() -> None:
    async with client_with_raw_server() as (client, raw):
        failures: list[BaseException] = []

        async def ask() -> None:
            try:
                await client.request("x")
            except ConnectionClosedError as exc:
                failures.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            await raw.read()
            await client.close()
        assert len(failures) == 1


async def test_five_mib_message_round_trip() -> None:
    text = "ü" * (5 * 1024 * 1024 // 2) + "\nend"
    async with pair() as (client, _, _, _):
        assert await client.request("echo", {"text": text}) == {"text": text}


async def test_models_are_sent_by_alias_without_none_fields() -> None:
    async with client_with_raw_server() as (client, raw):
        await client.notify("session/update", Update(session_id="s1", text="hi"))
        line = await raw.lines.__anext__()
        assert line == (
            b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","text":"hi"}}'
        )


async def test_concurrent_writes_never_interleave_and_keep_call_order() -> None:
    async with client_with_raw_server() as (client, raw):
        payload = "p" * 200_000
        async with anyio.create_task_group() as tg:
            for i in range(40):
                tg.start_soon(client.notify, "big", {"i": i, "payload": payload})
            seen = [await raw.read() for _ in range(40)]
        assert [msg["params"]["i"] for msg in seen] == list(range(40))
        assert all(msg["params"]["payload"] == payload for msg in seen)


async def test_unencodable_params_raise_to_the_caller_and_nothing_is_sent() -> None:
    async with client_with_raw_server() as (client, raw):
        with pytest.raises(ValueError):
            await client.request("m", {"x": float("inf")})
        with pytest.raises(TypeError):
            await client.notify("m", {"x": object()})
        await client.notify("after")
        assert (await raw.read())["method"] == "after"


async def test_notification_handler_cannot_await_a_response() -> None:
    async with pair() as (client, _server, _, server_peer):
        await client.notify("ask_back")
        await server_peer.asked_back.wait()
        assert len(server_peer.errors) == 1
        assert "notification handler cannot await a response" in str(server_peer.errors[0])


async def test_an_answer_too_long_to_read_fails_the_request_it_answers() -> None:
    """The peer answers our request 1 with a line over the limit: request 1 fails at once
    (it would wait forever), and nothing is sent back under the peer's own numbering."""
    (a_recv, a_send), (b_recv, b_send) = memory_pair()
    client = Connection(a_recv, a_send, Peer(), name="client", max_line_bytes=1024)
    server = RawServer(LineReader(b_recv), b_send)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.serve)
            outcome: list[BaseException | object] = []

            async def ask() -> None:
                try:
                    outcome.append(await client.request("fs/read_text_file", {"path": "/big"}))
                except RpcError as exc:
                    outcome.append(exc)

            tg.start_soon(ask)
            sent = await server.read()
            await server.write({"id": sent["id"], "result": {"content": "x" * 5000}})
            while not outcome:
                await anyio.sleep(0.01)
            (error,) = outcome
            assert isinstance(error, RpcError) and "too long" in error.message
            await server.write({"id": 5, "method": "ping_me"})  # still serving
            reply = await server.read()
            assert reply["id"] == 5  # (an error for the unknown method): nothing else came first
            await client.close()
            await b_recv.aclose()
            await b_send.aclose()
