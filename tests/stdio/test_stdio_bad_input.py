"""Garbage on the real stdin: each bad line gets its error, the backend keeps serving.

A line nested too deeply to parse is answered by what can be read of it: -32602 with the
id of a request whose JSON is whole, -32700 with id null when its brackets never close.
A notification (no ``id`` member) is never answered, whatever is wrong with it: the
stdout of each test is checked whole, so a stray answer anywhere fails it.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from acpwire.rpc import DEFAULT_MAX_LINE_BYTES
from tests.stdio.stdio_support import (
    ACPWIRE,
    STEP_TIMEOUT,
    JsonObject,
    RawPeer,
    child_env,
    closed_port,
    parse_lines,
    raw_child,
    request,
    write_home,
)

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

OVERSIZE = DEFAULT_MAX_LINE_BYTES + 8 * 1024 * 1024  # 40 MiB with the default 32 MiB limit


def oversized_request() -> bytes:
    """A well-formed request that is simply too long to be accepted."""
    head = json.dumps(request(77, "initialize", {"protocolVersion": 1, "_meta": {"pad": ""}}))
    cut = head.rindex('""') + 1
    line = head[:cut].encode() + b"x" * (OVERSIZE - len(head)) + head[cut:].encode()
    assert len(line) >= OVERSIZE > DEFAULT_MAX_LINE_BYTES
    return line + b"\n"


async def test_invalid_json_and_an_oversized_line_then_a_valid_request(tmp_path: Path) -> None:
    home = write_home(tmp_path / "home", f"http://127.0.0.1:{closed_port()}/v1")
    stderr_path = tmp_path / "stderr.log"
    async with raw_child(ACPWIRE, env=child_env(home), stderr_path=stderr_path) as peer:
        with anyio.fail_after(STEP_TIMEOUT):
            await peer.send_bytes(b'{"jsonrpc": "2.0", "id": 5, "method": \n')
            parse_error = await peer.next_message()
            await peer.send_bytes(oversized_request())
            too_long = await peer.next_message()
            init = await peer.call("initialize", {"protocolVersion": 1})
        assert await peer.finish() == 0

    assert parse_error["id"] is None and parse_error["error"]["code"] == -32700
    # Answered with its own id, read from the start of the line: the call fails at once.
    assert too_long["id"] == 77 and too_long["error"]["code"] == -32600
    assert "exceeds the limit" in too_long["error"]["message"]
    assert str(DEFAULT_MAX_LINE_BYTES) in too_long["error"]["message"]
    assert init["result"]["protocolVersion"] == 1
    # The oversized request was not half-executed: id 77 got that error and nothing else.
    messages = parse_lines(peer.lines)
    assert [m.get("id") for m in messages] == [None, 77, 1]
    assert "Traceback" not in stderr_path.read_text(encoding="utf-8")


DEEP_ARRAY = "[" * 10_000 + "]" * 10_000
DEEP_OBJECT = '{"a":' * 10_000 + "1" + "}" * 10_000


def _home(tmp_path: Path) -> Path:
    return write_home(tmp_path / "home", f"http://127.0.0.1:{closed_port()}/v1")


async def _one_answer(peer: RawPeer, line: str) -> JsonObject:
    """Send ``line``: the one message it is answered with, before anything else."""
    before = len(peer.lines)
    await peer.send_bytes(line.encode() + b"\n")
    answer = await peer.next_message()
    assert len(peer.lines) == before + 1, peer.lines[before:]
    return answer


async def _still_serving(peer: RawPeer) -> None:
    """A valid request right behind: its answer is the one line written since."""
    before = len(peer.lines)
    listed = await peer.call("session/list", {})
    assert listed["result"]["sessions"] == []
    assert len(peer.lines) == before + 1, peer.lines[before:]


async def test_deep_nesting_with_a_readable_id_is_invalid_params_for_that_id(
    tmp_path: Path,
) -> None:
    deep_requests = [
        (7, '{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"a":' + DEEP_ARRAY + "}}"),
        (
            "n",
            '{"jsonrpc":"2.0","id":"n","method":"session/new","params":'
            '{"cwd":"/tmp","mcpServers":[],"_meta":' + DEEP_OBJECT + "}}",
        ),
        # The id after the params: the whole line is read, not its start.
        (
            8,
            '{"jsonrpc":"2.0","method":"session/list","params":{"_meta":'
            + DEEP_ARRAY
            + '},"id":8}',
        ),
    ]
    stderr_path = tmp_path / "stderr.log"
    async with raw_child(ACPWIRE, env=child_env(_home(tmp_path)), stderr_path=stderr_path) as peer:
        with anyio.fail_after(STEP_TIMEOUT):
            await peer.call("initialize", {"protocolVersion": 1})
            for msg_id, line in deep_requests:
                answer = await _one_answer(peer, line)
                assert (answer["id"], answer["error"]["code"]) == (msg_id, -32602), answer
                assert "nested deeper than 200 levels" in answer["error"]["message"]
                await _still_serving(peer)
        assert await peer.finish() == 0
    assert len(parse_lines(peer.lines)) == 1 + 2 * len(deep_requests)
    assert "Traceback" not in stderr_path.read_text(encoding="utf-8")


async def test_deep_nesting_that_never_closes_is_a_parse_error_with_a_null_id(
    tmp_path: Path,
) -> None:
    unclosed = [
        "[" * 10_000,
        '{"a":' * 10_000,
        # A readable id, but the line is cut off: not JSON, so no id is told from it.
        '{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"a":' + "[" * 10_000,
        '{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"a":' + DEEP_ARRAY[:-1] + "}}",
    ]
    stderr_path = tmp_path / "stderr.log"
    async with raw_child(ACPWIRE, env=child_env(_home(tmp_path)), stderr_path=stderr_path) as peer:
        with anyio.fail_after(STEP_TIMEOUT):
            await peer.call("initialize", {"protocolVersion": 1})
            for line in unclosed:
                answer = await _one_answer(peer, line)
                assert (answer["id"], answer["error"]["code"]) == (None, -32700), line[-40:]
                await _still_serving(peer)
        assert await peer.finish() == 0
    assert len(parse_lines(peer.lines)) == 1 + 2 * len(unclosed)
    assert "Traceback" not in stderr_path.read_text(encoding="utf-8")


MALFORMED_NOTIFICATIONS: dict[str, str] = {
    "cancel, sessionId not a string": '{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":5}}',
    "cancel, no sessionId": '{"jsonrpc":"2.0","method":"session/cancel","params":{}}',
    "cancel, deep params": '{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s",'
    '"_meta":' + DEEP_ARRAY + "}}",
    "unknown method": '{"jsonrpc":"2.0","method":"session/no_such_thing","params":{}}',
    "jsonrpc 1.0": '{"jsonrpc":"1.0","method":"session/cancel","params":{"sessionId":"s"}}',
    "no jsonrpc": '{"method":"session/cancel","params":{"sessionId":"s"}}',
    "params a number": '{"jsonrpc":"2.0","method":"session/cancel","params":5}',
    "params a string": '{"jsonrpc":"2.0","method":"session/cancel","params":"s"}',
    "extension, params a string": '{"jsonrpc":"2.0","method":"_vendor.example/ping","params":"x"}',
    "extension, params an array": '{"jsonrpc":"2.0","method":"_vendor.example/ping","params":[1]}',
    "method a number": '{"jsonrpc":"2.0","method":1,"params":"bar"}',
    "no method": '{"jsonrpc":"2.0","params":{"sessionId":"s"}}',
    "empty object": "{}",
    "deep, no method": DEEP_OBJECT,
}


async def test_malformed_notifications_are_never_answered(tmp_path: Path) -> None:
    """Whatever is wrong with a message without an "id" member, nothing is written for it;
    one with an id member, even null or not a valid id, is a request and is answered."""
    stderr_path = tmp_path / "stderr.log"
    async with raw_child(ACPWIRE, env=child_env(_home(tmp_path)), stderr_path=stderr_path) as peer:
        with anyio.fail_after(STEP_TIMEOUT * 2):
            await peer.call("initialize", {"protocolVersion": 1})
            for name, line in MALFORMED_NOTIFICATIONS.items():
                before = len(peer.lines)
                await peer.send_bytes(line.encode() + b"\n")
                await _still_serving(peer)
                assert len(peer.lines) == before + 1, name
            for raw_id in ("{}", "[1]"):
                line = '{"jsonrpc":"2.0","id":' + raw_id + ',"method":"session/list","params":{}}'
                answer = await _one_answer(peer, line)
                assert (answer["id"], answer["error"]["code"]) == (None, -32600), answer
            answer = await _one_answer(
                peer, '{"jsonrpc":"2.0","id":null,"method":"session/list","params":5}'
            )
            assert (answer["id"], answer["error"]["code"]) == (None, -32600), answer
        assert await peer.finish() == 0
    # The whole stdout: initialize, one answer per valid request, the three id refusals.
    messages = parse_lines(peer.lines)
    assert len(messages) == 1 + len(MALFORMED_NOTIFICATIONS) + 3
    assert sum("error" in m for m in messages) == 3
    stderr = stderr_path.read_text(encoding="utf-8")
    assert "Traceback" not in stderr
    # One line each: the endpoint logs the two cancels, the unknown method and the
    # extension without a handler; the connection every envelope it refused.
    assert stderr.count("not answered") == len(MALFORMED_NOTIFICATIONS) - 4
