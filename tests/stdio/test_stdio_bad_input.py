"""Garbage on the real stdin: each bad line gets its error, the backend keeps serving."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from acpwire.rpc import DEFAULT_MAX_LINE_BYTES
from tests.stdio.stdio_support import (
    ACPWIRE,
    STEP_TIMEOUT,
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
