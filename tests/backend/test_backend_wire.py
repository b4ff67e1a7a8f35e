"""Raw bad input on one backend connection: each line gets the right JSON-RPC error (or
none, for notifications) and the connection keeps serving."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import ByteReceiveStream

from acpwire.rpc import memory_pair
from acpwire.server.app import Runtime, serve
from tests.backend.harness import NoMcp, make_settings, workspace_of
from tests.support.fake_llm import FakeLLM

pytestmark = pytest.mark.anyio


class Lines:
    """Reads newline-delimited JSON messages from the backend."""

    def __init__(self, stream: ByteReceiveStream) -> None:
        self.stream = stream
        self.buffer = b""

    async def next(self) -> dict[str, Any]:
        with anyio.fail_after(10):
            while b"\n" not in self.buffer:
                self.buffer += await self.stream.receive()
        line, self.buffer = self.buffer.split(b"\n", 1)
        message = json.loads(line)
        assert isinstance(message, dict)
        return message

    async def answer(self, request_id: object) -> dict[str, Any]:
        """The answer to ``request_id``, skipping notifications (``session/update``)."""
        while True:
            message = await self.next()
            if "method" not in message:
                assert message.get("id") == request_id, message
                return message


def request(request_id: int, method: str, params: object = None) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        body["params"] = params
    return json.dumps(body).encode() + b"\n"


async def test_bad_lines_get_errors_and_the_connection_keeps_serving(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    cwd = str(workspace_of(tmp_path))
    with FakeLLM() as llm:
        runtime = Runtime.create(make_settings(tmp_path / "home", llm.base_url))
        (a_recv, a_send), (c_recv, c_send) = memory_pair()
        lines = Lines(c_recv)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: serve(runtime, a_recv, a_send, mcp=NoMcp()))

                async def expect(raw: bytes, request_id: object, code: int) -> dict[str, Any]:
                    await c_send.send(raw)
                    answer = await lines.answer(request_id)
                    assert answer["error"]["code"] == code, answer
                    return answer

                await expect(b"{not json\n", None, -32700)
                await expect(b'{"jsonrpc": "1.0", "id": 1, "method": "x"}\n', 1, -32600)
                await expect(b"[1, 2]\n", None, -32600)
                await expect(request(2, "no/such_method"), 2, -32601)
                for n, probe in enumerate(("ping", "health", "healthcheck")):
                    await expect(request(3 + n, probe), 3 + n, -32601)
                # Liveness probes are not worth more than a debug line, and no traceback.
                noisy = [x for x in caplog.records if "ping" in x.getMessage()]
                assert noisy and all(x.levelno == logging.DEBUG and not x.exc_info for x in noisy)
                # A non-integer version is never coerced: it is a version we do not speak,
                # so negotiation answers ours.
                await c_send.send(request(6, "initialize", {"protocolVersion": "one"}))
                assert (await lines.answer(6))["result"]["protocolVersion"] == 1
                # Unknown notifications are ignored, without an answer.
                await c_send.send(b'{"jsonrpc": "2.0", "method": "no/such_note"}\n')
                await c_send.send(request(7, "initialize", {"protocolVersion": 1}))
                assert (await lines.answer(7))["result"]["protocolVersion"] == 1
                answer = await expect(
                    request(8, "session/new", {"cwd": 5, "mcpServers": []}), 8, -32602
                )
                assert "cwd" in answer["error"]["message"]
                await c_send.send(request(9, "session/new", {"cwd": cwd, "mcpServers": []}))
                sid = (await lines.answer(9))["result"]["sessionId"]
                await expect(request(10, "session/prompt", {"sessionId": sid}), 10, -32602)
                await expect(
                    request(11, "session/prompt", {"sessionId": sid, "prompt": [{"type": "?"}]}),
                    11,
                    -32602,
                )
                prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "still here"}]}
                await c_send.send(request(12, "session/prompt", prompt))
                texts = []
                while True:
                    message = await lines.next()
                    if message.get("id") == 12:
                        break
                    update = message["params"]["update"]
                    if update["sessionUpdate"] == "agent_message_chunk":
                        texts.append(update["content"]["text"])
                assert message["result"]["stopReason"] == "end_turn"
                assert "".join(texts) == "You said: still here"
                tg.cancel_scope.cancel()
        finally:
            runtime.close()


async def test_cancel_right_behind_the_prompt_stops_the_turn(tmp_path: Path) -> None:
    """The cancel is handled before the agent's turn has started: it must still stop it."""
    work = workspace_of(tmp_path)
    marker = work / "marker"
    slow_tool = {
        "match": "touch it",
        "initial_delay": 1.0,
        "tool_calls": [{"id": "t1", "name": "terminal", "arguments": {"command": "touch marker"}}],
    }
    with FakeLLM(rules=[slow_tool, {"match": "next", "text": "done"}]) as llm:
        runtime = Runtime.create(make_settings(tmp_path / "home", llm.base_url))
        (a_recv, a_send), (c_recv, c_send) = memory_pair()
        lines = Lines(c_recv)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: serve(runtime, a_recv, a_send, mcp=NoMcp()))
                await c_send.send(request(1, "initialize", {"protocolVersion": 1}))
                await lines.answer(1)
                await c_send.send(request(2, "session/new", {"cwd": str(work), "mcpServers": []}))
                sid = (await lines.answer(2))["result"]["sessionId"]
                prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "touch it"}]}
                cancel = {
                    "jsonrpc": "2.0",
                    "method": "session/cancel",
                    "params": {"sessionId": sid},
                }
                # One write: the backend reads the cancel right behind the prompt.
                await c_send.send(
                    request(3, "session/prompt", prompt) + json.dumps(cancel).encode() + b"\n"
                )
                assert (await lines.answer(3))["result"]["stopReason"] == "cancelled"
                prompt["prompt"] = [{"type": "text", "text": "next"}]
                await c_send.send(request(4, "session/prompt", prompt))
                assert (await lines.answer(4))["result"]["stopReason"] == "end_turn"
                tg.cancel_scope.cancel()
        finally:
            runtime.close()
    assert not marker.exists(), "the cancelled turn went on to run its tool call"
