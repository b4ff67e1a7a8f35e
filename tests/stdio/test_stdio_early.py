"""The ``initialize`` answer before the event loop (acpwire.server.process.first_answer),
over real stdio.

The command answers a valid ``initialize`` sent first before anyio loads; everything else
first is left to the connection. Each test drives a real ``python -m acpwire`` and checks
that what a client sees is exactly what the connection itself answers: the same bytes for
the same ``initialize``, the same errors for bad first lines, nothing lost from what was
read before the loop started, and quiet exits on end of input and signals.
"""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import time
from pathlib import Path

import anyio
import pytest

from acpwire.server.process.first_answer import EARLY_LINE_LIMIT
from tests.stdio.stdio_support import (
    ACPWIRE,
    EXIT_TIMEOUT,
    STEP_TIMEOUT,
    JsonObject,
    RawPeer,
    child_env,
    closed_port,
    raw_child,
    request,
    write_home,
)

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

INIT = {
    "protocolVersion": 1,
    "clientCapabilities": {"fs": {"readTextFile": True}, "terminal": True},
    "clientInfo": {"name": "zed", "version": "0.200.0"},
}


def _line(message: JsonObject) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _home(tmp_path: Path) -> Path:
    return write_home(tmp_path / "home", f"http://127.0.0.1:{closed_port()}/v1")


async def _answers(peer: RawPeer, count: int) -> list[JsonObject]:
    with anyio.fail_after(STEP_TIMEOUT):
        return [await peer.next_message() for _ in range(count)]


def _stderr_clean(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in text, text


async def test_the_early_answer_is_the_answer_the_connection_gives(tmp_path: Path) -> None:
    """Sent first, initialize is answered early; sent after another request, by the
    connection's front desk. Both answers are the same bytes but the id."""
    home = _home(tmp_path)
    async with raw_child(ACPWIRE, env=child_env(home), stderr_path=tmp_path / "early.log") as peer:
        await peer.send_bytes(_line(request(7, "initialize", INIT)))
        await _answers(peer, 1)
        assert await peer.finish() == 0
    async with raw_child(ACPWIRE, env=child_env(home), stderr_path=tmp_path / "loop.log") as late:
        # A notification first: nothing is answered early, the loop answers both.
        await late.send_bytes(
            _line({"jsonrpc": "2.0", "method": "$/ping"}) + _line(request(7, "initialize", INIT))
        )
        await _answers(late, 1)
        assert await late.finish() == 0
    assert peer.lines == late.lines
    assert json.loads(peer.lines[0])["result"]["protocolVersion"] == 1


async def test_what_follows_initialize_in_the_same_write_is_not_lost(tmp_path: Path) -> None:
    """Blank lines, then initialize and two requests in one write, then a request split
    across writes: every request answered (requests run concurrently: in any order)."""
    async with raw_child(
        ACPWIRE, env=child_env(_home(tmp_path)), stderr_path=tmp_path / "stderr.log"
    ) as peer:
        burst = (
            b"\r\n  \n"
            + _line(request(1, "initialize", INIT))
            + _line(request(2, "session/list", {}))
            + _line(request(3, "session/list", {}))
        )
        await peer.send_bytes(burst)
        split = _line(request(4, "session/list", {}))
        await peer.send_bytes(split[:9])
        await anyio.sleep(0.2)
        await peer.send_bytes(split[9:])
        answers = await _answers(peer, 4)
        assert answers[0]["id"] == 1  # answered before the loop started
        assert sorted(a["id"] for a in answers) == [1, 2, 3, 4]
        assert all("result" in a for a in answers), answers
        assert await peer.finish() == 0
    _stderr_clean(tmp_path / "stderr.log")


async def test_an_initialize_split_across_writes_is_answered(tmp_path: Path) -> None:
    async with raw_child(
        ACPWIRE, env=child_env(_home(tmp_path)), stderr_path=tmp_path / "stderr.log"
    ) as peer:
        line = _line(request("a", "initialize", INIT))
        for start in range(0, len(line), 40):
            await peer.send_bytes(line[start : start + 40])
            await anyio.sleep(0.02)
        (answer,) = await _answers(peer, 1)
        assert answer["id"] == "a" and answer["result"]["protocolVersion"] == 1
        assert await peer.finish() == 0


@pytest.mark.parametrize(
    ("first", "code", "answer_id"),
    [
        (b"{not json\n", -32700, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":[1]}\n', -32602, 1),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":NaN}}\n',
            -32700,
            None,
        ),
        (
            b'{"jsonrpc":"2.0","id":true,"method":"initialize","params":{"protocolVersion":1}}\n',
            -32600,
            None,
        ),
        (
            b'[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}]\n',
            -32600,
            None,
        ),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}]\n',
            -32700,
            None,
        ),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"_meta":'
            + b"[" * 5_000
            + b"]" * 5_000
            + b"}}\n",
            -32602,
            1,
        ),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"_meta":'
            + b"[" * 5_000
            + b"\n",
            -32700,
            None,
        ),
    ],
    ids=[
        "not-json",
        "array-params",
        "nan",
        "bool-id",
        "batch",
        "trailing-junk",
        "too-deep",
        "too-deep-unclosed",
    ],
)
async def test_a_bad_first_line_gets_the_connections_error_and_serving_goes_on(
    tmp_path: Path, first: bytes, code: int, answer_id: object
) -> None:
    async with raw_child(
        ACPWIRE, env=child_env(_home(tmp_path)), stderr_path=tmp_path / "stderr.log"
    ) as peer:
        await peer.send_bytes(first)
        (error,) = await _answers(peer, 1)
        assert error["error"]["code"] == code and error["id"] == answer_id, error
        answer = await peer.call("initialize", INIT)
        assert answer["result"]["protocolVersion"] == 1
        assert await peer.finish() == 0
    _stderr_clean(tmp_path / "stderr.log")


@pytest.mark.parametrize(
    "first",
    [
        b'{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":1}}\n',
        b'{"jsonrpc":"1.0","method":"initialize","params":{"protocolVersion":1}}\n',
        b'{"jsonrpc":"2.0","method":"initialize","params":5}\n',
        b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":5}}\n',
        b'{"jsonrpc":"2.0","method":"initialize","params":{"_meta":'
        + b"[" * 5_000
        + b"]" * 5_000
        + b"}}\n",
    ],
    ids=["initialize", "jsonrpc-1.0", "params-a-number", "bad-cancel", "too-deep"],
)
async def test_a_notification_first_is_never_answered(tmp_path: Path, first: bytes) -> None:
    """Not answered early, nor by the connection: the one line out is initialize's."""
    async with raw_child(
        ACPWIRE, env=child_env(_home(tmp_path)), stderr_path=tmp_path / "stderr.log"
    ) as peer:
        await peer.send_bytes(first)
        answer = await peer.call("initialize", INIT)
        assert answer["result"]["protocolVersion"] == 1
        assert await peer.finish() == 0
    assert len(peer.lines) == 1, peer.lines
    _stderr_clean(tmp_path / "stderr.log")


async def test_a_version_that_is_not_an_integer_is_negotiated_by_the_connection(
    tmp_path: Path,
) -> None:
    """Left to the connection (it does not validate as sent): answered with our version."""
    async with raw_child(
        ACPWIRE, env=child_env(_home(tmp_path)), stderr_path=tmp_path / "stderr.log"
    ) as peer:
        await peer.send(request(1, "initialize", {**INIT, "protocolVersion": "2025-06-18"}))
        (answer,) = await _answers(peer, 1)
        assert answer["result"]["protocolVersion"] == 1
        assert await peer.finish() == 0


async def test_an_initialize_with_a_null_id_is_left_to_the_connection(tmp_path: Path) -> None:
    async with raw_child(
        ACPWIRE, env=child_env(_home(tmp_path)), stderr_path=tmp_path / "stderr.log"
    ) as peer:
        await peer.send(request(None, "initialize", INIT))  # type: ignore[arg-type]
        (answer,) = await _answers(peer, 1)
        assert answer["id"] is None and answer["result"]["protocolVersion"] == 1
        assert await peer.finish() == 0


async def test_a_first_line_too_long_to_answer_early_reaches_the_connection(
    tmp_path: Path,
) -> None:
    """Over the early limit: the bytes read so far are handed on, nothing is dropped."""
    padding = "x" * (EARLY_LINE_LIMIT + 200_000)
    params = {**INIT, "_meta": {"padding": padding}}
    async with raw_child(
        ACPWIRE, env=child_env(_home(tmp_path)), stderr_path=tmp_path / "stderr.log"
    ) as peer:
        await peer.send(request(1, "initialize", params))
        (answer,) = await _answers(peer, 1)
        assert answer["id"] == 1 and answer["result"]["protocolVersion"] == 1
        assert await peer.finish() == 0


@pytest.mark.parametrize("tail", [b"", b"\n\n", b'{"jsonrpc":"2.0","id":1,"method":"initia'])
async def test_end_of_input_before_a_whole_line_ends_the_process(
    tmp_path: Path, tail: bytes
) -> None:
    """Nothing, blank lines, or half a message, then end of input: exit 0, no answer
    but to what was complete (half a message is not JSON: -32700)."""
    async with raw_child(
        ACPWIRE, env=child_env(_home(tmp_path)), stderr_path=tmp_path / "stderr.log"
    ) as peer:
        await peer.send_bytes(tail)
        assert await peer.finish() == 0
    codes = [json.loads(line)["error"]["code"] for line in peer.lines]
    assert codes == ([-32700] if tail.startswith(b"{") else [])
    _stderr_clean(tmp_path / "stderr.log")


async def test_an_initialize_without_its_newline_at_end_of_input_is_answered(
    tmp_path: Path,
) -> None:
    """The last line needs no newline (as the connection reads it)."""
    async with raw_child(
        ACPWIRE, env=child_env(_home(tmp_path)), stderr_path=tmp_path / "stderr.log"
    ) as peer:
        await peer.send_bytes(_line(request(1, "initialize", INIT))[:-1])
        assert await peer.finish() == 0
    (answer,) = [json.loads(line) for line in peer.lines]
    assert answer["id"] == 1 and answer["result"]["protocolVersion"] == 1


def _reading_stdin(pid: int) -> bool:
    """The process's main thread is blocked in read(2) on a pipe (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/syscall").read_text().split()
        if fields[0] != "0":  # read
            return False
        target = os.readlink(f"/proc/{pid}/fd/{int(fields[1], 16)}")
    except (OSError, IndexError, ValueError):
        return False
    return target.startswith("pipe:")


@pytest.mark.skipif(not Path("/proc/self/syscall").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
async def test_a_signal_while_waiting_for_the_first_line_exits_quietly(
    tmp_path: Path, signum: signal.Signals
) -> None:
    async with raw_child(
        ACPWIRE, env=child_env(_home(tmp_path)), stderr_path=tmp_path / "stderr.log"
    ) as peer:
        with anyio.fail_after(STEP_TIMEOUT):
            while not _reading_stdin(peer.process.pid):
                await anyio.sleep(0.02)
        peer.process.send_signal(signum)
        with anyio.fail_after(EXIT_TIMEOUT):
            assert await peer.process.wait() == 0
    assert peer.lines == []
    _stderr_clean(tmp_path / "stderr.log")


def test_end_of_input_typed_at_a_terminal_ends_the_process(tmp_path: Path) -> None:
    """A terminal reports Ctrl-D once, and a second read blocks: end of input seen before
    the loop must not be waited for again."""
    main, secondary = pty.openpty()
    try:
        with (tmp_path / "stderr.log").open("wb") as stderr:
            child = subprocess.Popen(
                ACPWIRE,
                stdin=secondary,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=child_env(_home(tmp_path)),
            )
        os.close(secondary)
        try:
            time.sleep(1.0)  # well into the first read
            os.write(main, b"\x04")  # Ctrl-D on an empty line: end of input
            assert child.wait(timeout=EXIT_TIMEOUT) == 0
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        assert child.stdout is not None and child.stdout.read() == b""
    finally:
        os.close(main)
    _stderr_clean(tmp_path / "stderr.log")


FAILING_FACTORY = """
from acpwire import BaseAgentFactory

class Factory(BaseAgentFactory):
    def provider_hint(self):
        raise RuntimeError("the provider cannot be read")

    def create_agent(self, context):
        raise AssertionError("no session is made")
"""


async def test_a_factory_failing_at_initialize_gets_the_connections_error(
    tmp_path: Path,
) -> None:
    """Nothing is written early when the answer cannot be built: the connection answers
    -32603 (the traceback in the log) and goes on serving."""
    (tmp_path / "failing_agent.py").write_text(FAILING_FACTORY, encoding="utf-8")
    env = {**child_env(_home(tmp_path)), "PYTHONPATH": str(tmp_path)}
    command = (*ACPWIRE, "--agent", "failing_agent:Factory")
    async with raw_child(command, env=env, stderr_path=tmp_path / "stderr.log") as peer:
        for _ in range(2):  # the same, early or not
            answer = await peer.call("initialize", INIT)
            assert answer["error"]["code"] == -32603, answer
        assert "sessions" in (await peer.call("session/list", {}))["result"]
        assert await peer.finish() == 0
    assert "the provider cannot be read" in (tmp_path / "stderr.log").read_text()


def test_the_early_decode_refuses_what_the_endpoint_refuses_and_no_more() -> None:
    """The words in a string are answered early; a literal is left to the connection."""
    from acpwire.server.process.first_answer import _initialize_request

    named = {**INIT, "clientInfo": {"name": "NaN Infinity", "version": "1"}}
    found = _initialize_request(json.dumps(request(3, "initialize", named)).encode())
    assert found is not None and found[0] == 3
    assert found[1].client_info is not None and found[1].client_info.name == "NaN Infinity"
    literal = b'{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":1,"_meta":{"x":NaN}}}'
    assert _initialize_request(literal) is None
