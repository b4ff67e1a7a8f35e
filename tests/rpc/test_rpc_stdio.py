"""The stdio transport over real pipes: a real subprocess serving ``rpc_echo_server.py``."""

import json
import sys
from pathlib import Path
from subprocess import PIPE
from typing import Any

import anyio
import pytest
from anyio.abc import ByteSendStream

from acpwire.rpc import LineReader

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

SERVER = Path(__file__).with_name("rpc_echo_server.py")


async def call(
    stdin: ByteSendStream, lines: LineReader, msg_id: int, method: str, params: object
) -> Any:
    request = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
    await stdin.send(json.dumps(request).encode() + b"\n")
    line = await lines.__anext__()
    assert isinstance(line, bytes)
    reply = json.loads(line)
    assert reply["id"] == msg_id, reply
    return reply


async def test_round_trips_over_real_pipes_and_stdout_stays_clean() -> None:
    big = "x" * (5 * 1024 * 1024)
    with anyio.fail_after(30):
        async with await anyio.open_process(
            [sys.executable, str(SERVER)], stdin=PIPE, stdout=PIPE, stderr=PIPE
        ) as proc:
            assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
            lines = LineReader(proc.stdout)
            reply = await call(proc.stdin, lines, 1, "echo", {"text": "héllo"})
            assert reply == {"jsonrpc": "2.0", "id": 1, "result": {"text": "héllo"}}
            assert (await call(proc.stdin, lines, 2, "noisy", {}))["result"] == {"ok": True}
            # A child process reads the null device, not the protocol stream.
            assert (await call(proc.stdin, lines, 3, "child_stdin", {}))["result"] == "''"
            assert (await call(proc.stdin, lines, 4, "echo", [big]))["result"] == [big]
            reply = await call(proc.stdin, lines, 5, "nope", {})
            assert reply["error"]["code"] == -32601

            await proc.stdin.aclose()  # end of input: the server must exit on its own
            rest = [line async for line in lines]
            stderr = b"".join([chunk async for chunk in proc.stderr])
            assert await proc.wait() == 0

    assert rest == []  # nothing but the five answers ever reached stdout
    text = stderr.decode()
    assert "stray print to stdout" in text
    assert "stray write to fd 1" in text
    assert "child writes to inherited stdout" in text
    assert "served until end of input" in text
