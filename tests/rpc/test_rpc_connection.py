"""Connection behaviour over memory streams: raw bytes in, raw bytes out.

The test side speaks raw NDJSON (``Raw``) to a served ``Connection``, so every code and
id on the wire is asserted exactly; after each bad input a valid request still works.
"""

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from anyio.abc import ByteReceiveStream, ByteSendStream
from pydantic import BaseModel

from acpwire.rpc import (
    Connection,
    ConnectionClosedError,
    InvalidMessage,
    LineReader,
    Notification,
    Request,
    RequestContext,
    RpcError,
    decode_message,
    invalid_params,
    memory_pair,
    method_not_found,
    request_cancelled,
)

pytestmark = pytest.mark.anyio

Json = dict[str, Any]


class Point(BaseModel):
    x: int
    y: int


class CancelParams(BaseModel):
    request_id: int | str | None


@dataclass
class Handler:
    """Test handler: a few methods with known behaviour, and records of what it saw."""

    notes: list[object] = field(default_factory=list)
    started: anyio.Event = field(default_factory=anyio.Event)
    cancelled: anyio.Event = field(default_factory=anyio.Event)
    seen_params: list[object] = field(default_factory=list)

    async def on_request(self, method: str, params: object, ctx: RequestContext) -> object:
        self.seen_params.append(params)
        if method == "echo":
            return params
        if method == "whoami":
            return {"id": ctx.id, "method": ctx.method}
        if method == "validate":
            return Point.model_validate(params).model_dump()
        if method == "crash":
            raise RuntimeError("secret internal detail")
        if method == "unserializable":
            return {"value": object()}
        if method == "refuse":
            raise RpcError(-32001, "refused", {"why": "policy"})
        if method == "give_up":
            raise request_cancelled()
        if method == "slow":
            self.started.set()
            try:
                await anyio.sleep_forever()
            finally:
                self.cancelled.set()
        raise method_not_found(method)

    async def on_notification(self, method: str, params: object) -> None:
        if method == "note":
            self.notes.append(params)
        elif method == "note_point":
            self.notes.append(Point.model_validate(params))
        elif method == "explode":
            raise RuntimeError("notification handler bug")
        else:
            raise method_not_found(method)


@dataclass
class Raw:
    """The test's end of the pipe: writes bytes, reads decoded JSON lines."""

    receive: ByteReceiveStream
    send: ByteSendStream
    lines: LineReader

    async def write(self, data: bytes) -> None:
        await self.send.send(data)

    async def read(self) -> Json:
        line = await self.lines.__anext__()
        assert isinstance(line, bytes)
        msg = json.loads(line)
        assert isinstance(msg, dict)
        return msg

    async def call(self, msg_id: int, method: str, params: object = None) -> Json:
        body: Json = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            body["params"] = params
        await self.write(json.dumps(body).encode() + b"\n")
        return await self.read()

    async def assert_still_serving(self) -> None:
        reply = await self.call(1000, "echo", {"still": "alive"})
        assert reply == {"jsonrpc": "2.0", "id": 1000, "result": {"still": "alive"}}


@asynccontextmanager
async def served(
    handler: Handler | None = None, **kwargs: Any
) -> AsyncIterator[tuple[Raw, Connection, Handler]]:
    handler = handler or Handler()
    (a_recv, a_send), (b_recv, b_send) = memory_pair()
    conn = Connection(b_recv, b_send, handler, name="server", **kwargs)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(conn.serve)
            yield Raw(a_recv, a_send, LineReader(a_recv)), conn, handler
            await conn.close()
            await a_recv.aclose()
            await a_send.aclose()


def error_of(reply: Json) -> tuple[object, int, str]:
    assert reply["jsonrpc"] == "2.0" and "result" not in reply
    return reply["id"], reply["error"]["code"], reply["error"]["message"]


# -- basic round trips ---------------------------------------------------------------


async def test_request_result_and_context() -> None:
    async with served() as (raw, _, _):
        assert await raw.call(1, "echo", {"a": [1, "é"]}) == {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"a": [1, "é"]},
        }
        reply = await raw.call(2, "whoami")
        assert reply["result"] == {"id": 2, "method": "whoami"}
        await raw.write(b'{"jsonrpc":"2.0","id":"str-id","method":"echo","params":[1]}\n')
        assert await raw.read() == {"jsonrpc": "2.0", "id": "str-id", "result": [1]}


async def test_lone_surrogates_in_ids_and_params_round_trip() -> None:
    async with served() as (raw, _, _):
        await raw.write(b'{"jsonrpc":"2.0","id":"\\ud800","method":"echo","params":["\\udfff"]}\n')
        assert await raw.read() == {"jsonrpc": "2.0", "id": "\ud800", "result": ["\udfff"]}


async def test_blank_lines_and_crlf_are_tolerated() -> None:
    async with served() as (raw, _, _):
        await raw.write(b'\n\r\n{"jsonrpc":"2.0","id":4,"method":"echo","params":{}}\r\n')
        assert await raw.read() == {"jsonrpc": "2.0", "id": 4, "result": {}}


async def test_notifications_are_handled_and_never_answered() -> None:
    async with served() as (raw, _, handler):
        for i in range(3):
            await raw.write(b'{"jsonrpc":"2.0","method":"note","params":{"i":%d}}\n' % i)
        await raw.assert_still_serving()  # the next line out is this answer, nothing else
        assert handler.notes == [{"i": 0}, {"i": 1}, {"i": 2}]


# -- bad input -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected_id", "code", "fragment"),
    [
        (b"{not json", None, -32700, "Parse error"),
        (b'{"jsonrpc":"2.0","id":1,"method":"echo","params":"\xff"}', None, -32700, "UTF-8"),
        (b"[1,2]", None, -32600, "batch"),
        (b'[{"jsonrpc":"2.0","id":1,"method":"echo"}]', None, -32600, "batch"),
        (b"42", None, -32600, "JSON object"),
        (b"null", None, -32600, "JSON object"),
        (b'{"jsonrpc":"2.0","id":3}', 3, -32600, "method"),
        (b'{"jsonrpc":"2.0","id":"q"}', "q", -32600, "method"),
        (b'{"jsonrpc":"1.0","id":4,"method":"echo"}', 4, -32600, "jsonrpc"),
        (b'{"id":4,"method":"echo"}', 4, -32600, "jsonrpc"),
        (b'{"jsonrpc":"2.0","id":5,"method":["echo"]}', 5, -32600, "method"),
        (b'{"jsonrpc":"2.0","id":false,"method":"echo"}', None, -32600, '"id"'),
        (b'{"jsonrpc":"2.0","id":2.5,"method":"echo"}', None, -32600, '"id"'),
        (b'{"jsonrpc":"2.0","id":[1],"method":"echo"}', None, -32600, '"id"'),
        (b'{"jsonrpc":"2.0","id":6,"method":"echo","params":7}', 6, -32600, "params"),
        # Explicitly null is an id: a request, answered.
        (b'{"jsonrpc":"2.0","id":null,"method":"echo","params":7}', None, -32600, "params"),
        (b'{"jsonrpc":"2.0","id":7,"method":"no/such"}', 7, -32601, "Method not found: no/such"),
        (b'{"jsonrpc":"2.0","id":8,"method":"give_up"}', 8, -32800, "Request cancelled"),
    ],
)
async def test_bad_input_is_answered_and_serving_continues(
    line: bytes, expected_id: object, code: int, fragment: str
) -> None:
    async with served() as (raw, _, _):
        await raw.write(line + b"\n")
        reply_id, reply_code, message = error_of(await raw.read())
        assert (reply_id, reply_code) == (expected_id, code)
        assert fragment in message
        await raw.assert_still_serving()


DEEP = b"[" * 1_000 + b"]" * 1_000


@pytest.mark.parametrize(
    ("line", "expected_id", "code", "fragment"),
    [
        # Too deep for the parser, yet JSON whose id can be read: its params are refused.
        (
            b'{"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":' + DEEP + b"}}",
            7,
            -32602,
            '"params" nested deeper than 200 levels',
        ),
        (b'{"jsonrpc":"2.0","method":"echo","id":"d","params":' + DEEP + b"}", "d", -32602, "200"),
        (
            b'{"jsonrpc":"2.0","id":8,"method":"echo","x":' + DEEP + b"}",
            8,
            -32600,
            '"x" nested deeper',
        ),
        (b'{"jsonrpc":"2.0","id":' + DEEP + b',"method":"echo"}', None, -32600, '"id" must be'),
        # Never closed, or cut off: not JSON, so no id is read.
        (b"[" * 5_000, None, -32700, "before its arrays and objects are closed"),
        (
            b'{"jsonrpc":"2.0","id":9,"method":"echo","params":{"a":' + b"[" * 5_000,
            None,
            -32700,
            "Parse error",
        ),
        (
            b'{"jsonrpc":"2.0","id":9,"method":"echo","params":' + DEEP + b"]}",
            None,
            -32700,
            "Parse error",
        ),
        (
            b'{"jsonrpc":"2.0","id":9,"method":"echo","params":' + DEEP + b"} x",
            None,
            -32700,
            "Parse error",
        ),
    ],
)
async def test_deep_nesting_is_answered_by_what_can_be_read(
    line: bytes, expected_id: object, code: int, fragment: str
) -> None:
    async with served() as (raw, _, handler):
        await raw.write(line + b"\n")
        reply_id, reply_code, message = error_of(await raw.read())
        assert (reply_id, reply_code) == (expected_id, code)
        assert fragment in message
        await raw.assert_still_serving()
    assert handler.seen_params == [{"still": "alive"}]  # the deep request never ran


@pytest.mark.parametrize(
    "line",
    [
        # JSON-RPC's own example of an invalid request, but without an id: not answered.
        b'{"jsonrpc":"2.0","method":1,"params":"bar"}',
        b'{"jsonrpc":"2.0","method":"note","params":5}',
        b'{"jsonrpc":"2.0","method":"note","params":"x"}',
        b'{"jsonrpc":"1.0","method":"note","params":{}}',
        b'{"method":"note","params":{}}',
        b'{"jsonrpc":"2.0","params":{}}',
        b"{}",
        b'{"jsonrpc":"2.0","method":"no/such","params":{}}',
        b'{"jsonrpc":"2.0","method":"note_point","params":{"x":"not a number"}}',
        b'{"jsonrpc":"2.0","method":"note","params":{"a":' + DEEP + b"}}",
        b'{"jsonrpc":"2.0","method":"note","x":' + DEEP + b"}",
        b'{"a":' * 1_000 + b"1" + b"}" * 1_000,
    ],
)
async def test_malformed_notifications_are_logged_never_answered(
    line: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with served() as (raw, _, handler):
        await raw.write(line + b"\n")
        await raw.assert_still_serving()  # the next line out is this answer, nothing else
    assert handler.notes == []
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert any("not answered" in text or "notification" in text for text in logged), logged


async def test_validation_error_is_short_invalid_params() -> None:
    async with served() as (raw, _, _):
        reply = await raw.call(1, "validate", {"x": "a"})
        assert error_of(reply) == (
            1,
            -32602,
            "Invalid params: x: Input should be a valid integer, unable to parse string as "
            "an integer; y: Field required",
        )
        assert "data" not in reply["error"]
        await raw.assert_still_serving()


async def test_unexpected_exception_is_internal_error_with_logged_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="acpwire.rpc")
    async with served() as (raw, _, _):
        reply = await raw.call(1, "crash")
        assert reply == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {
                "code": -32603,
                "message": "Internal error: RuntimeError: secret internal detail",
                "data": {"exception": "RuntimeError", "message": "secret internal detail"},
            },
        }
        reply = await raw.call(2, "unserializable")
        assert error_of(reply) == (
            2,
            -32603,
            "Internal error: TypeError: object of type object is not JSON serializable",
        )
        await raw.assert_still_serving()
    crashes = [r for r in caplog.records if r.exc_info and isinstance(r.exc_info[1], RuntimeError)]
    assert len(crashes) == 1 and crashes[0].levelno == logging.ERROR
    assert "crash" in crashes[0].getMessage()
    assert any(r.exc_info and isinstance(r.exc_info[1], TypeError) for r in caplog.records)


async def test_error_messages_false_leaves_the_message_out() -> None:
    async with served(error_messages=False) as (raw, _, _):
        reply = await raw.call(1, "crash")
        assert reply["error"] == {
            "code": -32603,
            "message": "Internal error: RuntimeError",
            "data": {"exception": "RuntimeError"},
        }


async def test_the_environment_leaves_the_message_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACPWIRE_ERROR_MESSAGES", "0")
    async with served() as (raw, _, _):
        reply = await raw.call(1, "crash")
        assert reply["error"]["data"] == {"exception": "RuntimeError"}


async def test_rpc_error_from_handler_keeps_code_and_data() -> None:
    async with served() as (raw, _, _):
        reply = await raw.call(1, "refuse")
        assert reply["error"] == {"code": -32001, "message": "refused", "data": {"why": "policy"}}


async def test_oversized_line_is_answered_and_skipped() -> None:
    async with served(max_line_bytes=1024) as (raw, _, _):
        big = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": "x" * 5000})
        await raw.write(big.encode() + b"\n")
        reply_id, code, message = error_of(await raw.read())
        assert (reply_id, code) == (1, -32600)  # its id, read from the start of the line
        assert str(len(big)) in message and "1024" in message
        for piece in range(0, 3000, 100):  # the same, arriving in small pieces
            await raw.write(b"y" * 100 + (b"\n" if piece == 2900 else b""))
        assert error_of(await raw.read())[:2] == (None, -32600)
        await raw.assert_still_serving()


async def test_notification_failures_are_logged_not_answered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="acpwire.rpc")
    async with served() as (raw, _, _):
        await raw.write(b'{"jsonrpc":"2.0","method":"explode"}\n')
        await raw.write(b'{"jsonrpc":"2.0","method":"unknown/note"}\n')
        await raw.write(b'{"jsonrpc":"2.0","method":"note_point","params":{"x":1}}\n')
        await raw.assert_still_serving()
    [boom] = [r for r in caplog.records if r.exc_info]
    assert boom.levelno == logging.ERROR and "explode" in boom.getMessage()
    assert any(
        r.levelno == logging.WARNING and "unknown/note" in r.getMessage() for r in caplog.records
    )
    assert any(
        r.levelno == logging.WARNING
        and "note_point: Invalid params: y: Field required" in r.getMessage()
        for r in caplog.records
    )


async def test_benign_probes_log_at_debug_only(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="acpwire.rpc")
    async with served() as (raw, _, _):
        assert error_of(await raw.call(1, "ping"))[1] == -32601
        assert error_of(await raw.call(2, "frobnicate"))[1] == -32601

    def levels(method: str) -> set[int]:
        return {r.levelno for r in caplog.records if f"'{method}'" in r.getMessage()}

    assert levels("ping") == {logging.DEBUG}
    assert levels("frobnicate") == {logging.INFO}
    assert not any(r.exc_info for r in caplog.records)


async def test_response_with_unknown_id_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="acpwire.rpc")
    async with served() as (raw, _, _):
        await raw.write(b'{"jsonrpc":"2.0","id":999,"result":{}}\n')
        await raw.write(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}\n')
        await raw.assert_still_serving()
    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("unknown request id 999" in m for m in messages)
    assert any("peer reported an error" in m for m in messages)


# -- custom decoder hook -------------------------------------------------------------


async def test_custom_decoder_params_pass_through_opaquely() -> None:
    def decode(line: bytes) -> Any:
        msg = decode_message(line)
        if isinstance(msg, Request) and msg.method == "echo_point":
            try:
                return Request(msg.id, "echo", Point.model_validate(msg.params))
            except ValueError:
                return InvalidMessage(invalid_params("bad point"), msg.id)
        if isinstance(msg, Notification) and msg.method == "$/cancel_request":
            assert isinstance(msg.params, dict)
            return Notification(msg.method, CancelParams(request_id=msg.params["requestId"]))
        if line == b"boom":
            raise RuntimeError("decoder bug")
        return msg

    async with served(decode=decode) as (raw, _, handler):
        reply = await raw.call(1, "echo_point", {"x": 1, "y": 2})
        assert reply["result"] == {"x": 1, "y": 2}  # a model result, spliced
        assert handler.seen_params == [Point(x=1, y=2)]
        assert error_of(await raw.call(2, "echo_point", {"x": "no"})) == (2, -32602, "bad point")
        await raw.write(b"boom\n")
        assert error_of(await raw.read()) == (
            None,
            -32603,
            "Internal error: RuntimeError: decoder bug",
        )
        await raw.write(b'{"jsonrpc":"2.0","id":3,"method":"slow"}\n')
        await handler.started.wait()
        await raw.write(b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":3}}\n')
        assert error_of(await raw.read()) == (3, -32800, "Request cancelled")
        await raw.assert_still_serving()


# -- incoming cancellation -----------------------------------------------------------


async def test_cancel_request_cancels_a_running_handler() -> None:
    async with served() as (raw, _, handler):
        await raw.write(b'{"jsonrpc":"2.0","id":7,"method":"slow"}\n')
        await handler.started.wait()
        await raw.write(b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}\n')
        assert error_of(await raw.read()) == (7, -32800, "Request cancelled")
        assert handler.cancelled.is_set()
        await raw.assert_still_serving()


async def test_cancel_arriving_with_the_request_still_gets_answered() -> None:
    async with served() as (raw, _, _):
        await raw.write(
            b'{"jsonrpc":"2.0","id":"s","method":"slow"}\n'
            b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"s"}}\n'
        )
        assert error_of(await raw.read()) == ("s", -32800, "Request cancelled")
        await raw.assert_still_serving()


async def test_cancel_for_unknown_or_malformed_id_is_harmless() -> None:
    async with served() as (raw, _, _):
        await raw.write(b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":5}}\n')
        await raw.write(b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{}}\n')
        await raw.write(b'{"jsonrpc":"2.0","method":"$/cancel_request"}\n')
        await raw.assert_still_serving()


# -- end of stream -------------------------------------------------------------------


async def test_eof_cancels_handlers_and_ends_serve() -> None:
    handler = Handler()
    (a_recv, a_send), (b_recv, b_send) = memory_pair()
    conn = Connection(b_recv, b_send, handler)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(conn.serve)
            await a_send.send(b'{"jsonrpc":"2.0","id":1,"method":"slow"}\n')
            await handler.started.wait()
            for i in range(100):
                await a_send.send(b'{"jsonrpc":"2.0","method":"note","params":[%d]}\n' % i)
            await a_send.aclose()
        # serve() returned on its own: the task group could exit.
    assert handler.cancelled.is_set()
    assert handler.notes == [[i] for i in range(100)]  # received before EOF, so still handled
    with pytest.raises(ConnectionClosedError):
        await conn.request("echo")
    await conn.close()
    await a_recv.aclose()


async def test_serve_runs_only_once() -> None:
    (a_recv, a_send), (b_recv, b_send) = memory_pair()
    await a_recv.aclose()
    await a_send.aclose()
    conn = Connection(b_recv, b_send, Handler())
    await conn.close()
    await conn.serve()  # closed streams: returns at once
    with pytest.raises(RuntimeError, match="once"):
        await conn.serve()


async def test_after_answer_callbacks_run_after_the_answer_is_written() -> None:
    from acpwire.rpc import Connection, RequestContext, memory_pair

    class Handler:
        async def on_request(self, method: str, params: object, ctx: RequestContext) -> object:
            async def later() -> None:
                await ctx.connection.notify("after", {"n": 1})

            ctx.after_answer.append(later)
            return {"ok": True}

        async def on_notification(self, method: str, params: object) -> None:
            return None

    (a_recv, a_send), (c_recv, c_send) = memory_pair()
    server = Connection(a_recv, a_send, Handler())
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        with anyio.fail_after(5):
            await c_send.send(b'{"jsonrpc":"2.0","id":7,"method":"x","params":{}}\n')
            buf = b""
            while buf.count(b"\n") < 2:
                buf += await c_recv.receive()
        tg.cancel_scope.cancel()
    first, second = (json.loads(x) for x in buf.split(b"\n")[:2])
    assert first == {"jsonrpc": "2.0", "id": 7, "result": {"ok": True}}
    assert second["method"] == "after"


async def test_after_answer_callbacks_start_once_the_answer_is_in_the_pipe() -> None:
    """Through the real stdout writer: a callback whose work blocks the event loop
    (building the next notifications) must not keep the answer from being written."""
    import os

    from anyio.lowlevel import current_token

    from acpwire.rpc import Connection, RequestContext
    from acpwire.rpc.transport import _FdSendStream

    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    seen_at_start: list[bytes] = []

    class Handler:
        async def on_request(self, method: str, params: object, ctx: RequestContext) -> object:
            async def later() -> None:
                try:
                    seen_at_start.append(os.read(read_fd, 1 << 16))
                except BlockingIOError:
                    seen_at_start.append(b"")

            ctx.after_answer.append(later)
            return {"ok": True}

        async def on_notification(self, method: str, params: object) -> None:
            return None

    (a_recv, _), (_, c_send) = memory_pair()
    out = _FdSendStream(write_fd, current_token())
    server = Connection(a_recv, out, Handler())
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve)
            with anyio.fail_after(5):
                await c_send.send(b'{"jsonrpc":"2.0","id":3,"method":"x","params":{}}\n')
                while not seen_at_start:
                    await anyio.sleep(0.01)
            tg.cancel_scope.cancel()
    finally:
        await out.aclose()
        os.close(read_fd)
    assert json.loads(seen_at_start[0]) == {"jsonrpc": "2.0", "id": 3, "result": {"ok": True}}


async def test_repeated_error_answers_to_notifications_warn_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Toad answers every notification of a kind it does not know with ``id: null``."""
    caplog.set_level(logging.DEBUG, logger="acpwire.rpc")
    rejected = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"Invalid params"}}\n'
    async with served() as (raw, _, _):
        for _ in range(5):
            await raw.write(rejected)
        await raw.write(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"y"}}\n')
        await raw.assert_still_serving()
    reported = [r for r in caplog.records if "peer reported an error" in r.getMessage()]
    warnings = [r.getMessage() for r in reported if r.levelno == logging.WARNING]
    assert len(warnings) == 2  # one per code
    assert "-32602" in warnings[0] and "-32600" in warnings[1]
    assert [r.levelno for r in reported].count(logging.DEBUG) == 4
