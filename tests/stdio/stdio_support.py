"""Shared pieces of the stdio tests: config homes, child environments, a raw JSON-line peer.

Every test here runs ``python -m acpwire`` (or an SDK agent) as a real child process.
:class:`RawPeer` speaks to such a child with hand-written JSON lines and keeps every line
the child wrote to stdout, so tests can check the wire itself, not only what a typed
client makes of it. Stderr always goes to a file, so a chatty child can never block on
a full pipe nobody reads.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from subprocess import PIPE
from typing import Any, TypeAlias

import anyio
from anyio.abc import Process

JsonObject: TypeAlias = dict[str, Any]

ACPWIRE: tuple[str, ...] = (sys.executable, "-m", "acpwire")
STEP_TIMEOUT = 20.0
"""Upper bound for one exchange with a child (start-up included)."""
EXIT_TIMEOUT = 10.0


def closed_port() -> int:
    """A local TCP port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_home(home: Path, base_url: str, *, model: str | None = "fake-model") -> Path:
    """A config home whose ``[model]`` table points at ``base_url``."""
    home.mkdir(parents=True, exist_ok=True)
    lines = ["[model]", f'base_url = "{base_url}"', "context_window = 32768"]
    if model is not None:
        lines.append(f'model = "{model}"')
    (home / "config.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return home


def child_env(home: Path) -> dict[str, str]:
    """A minimal environment: no provider variables leak in from the developer's shell."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home.parent),
        "LANG": "C.UTF-8",
        "ACPWIRE_HOME": str(home),
    }


def destructive_command_turn(tmp_path: Path) -> tuple[Path, list[JsonObject]]:
    """A workspace holding ``victim/`` and a model script whose first reply runs a command
    deleting it (and touching ``ran``), then says "Done.": what an approval must stop."""
    work = (tmp_path / "work").resolve()
    (work / "victim").mkdir(parents=True)
    command = f"rm -rf {work}/victim && touch {work}/ran"
    script: list[JsonObject] = [
        {"tool_calls": [{"id": "call-1", "name": "terminal", "arguments": {"command": command}}]},
        {"text": "Done."},
    ]
    return work, script


def request(msg_id: int | str, method: str, params: JsonObject | None = None) -> JsonObject:
    message: JsonObject = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


RequestAnswer: TypeAlias = Callable[[JsonObject], JsonObject | None]
"""The answer to a request from the child; None holds it: the request itself is handed
to the test (which may answer it later, or never)."""


def refuse(message: JsonObject) -> JsonObject:
    """Default answer to a request from the child: this client implements nothing."""
    return {
        "jsonrpc": "2.0",
        "id": message["id"],
        "error": {"code": -32601, "message": f"Method not found: {message['method']}"},
    }


class RawPeer:
    """The client end of a child's real stdio, in raw JSON lines."""

    def __init__(self, process: Process, answer: RequestAnswer = refuse) -> None:
        self.process = process
        self.answer = answer
        self.lines: list[bytes] = []
        """Every line the child wrote to stdout, verbatim, in order."""
        self.messages: list[JsonObject] = []
        """The lines that parsed as JSON objects, in order."""
        self._inbox_in, self._inbox = anyio.create_memory_object_stream[JsonObject](float("inf"))
        self._next_id = 0

    async def read_stdout(self) -> None:
        """Split stdout into lines until the child closes it."""
        assert self.process.stdout is not None
        buffer = bytearray()
        with self._inbox_in:
            async for chunk in self.process.stdout:
                buffer += chunk
                while (newline := buffer.find(b"\n")) >= 0:
                    self._take(bytes(buffer[:newline]))
                    del buffer[: newline + 1]
            if buffer:
                self._take(bytes(buffer))

    def _take(self, line: bytes) -> None:
        self.lines.append(line)
        try:
            message = json.loads(line)
        except ValueError:
            return  # kept in self.lines; purity checks report it
        if isinstance(message, dict):
            self.messages.append(message)
            self._inbox_in.send_nowait(message)

    async def send_bytes(self, data: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(data)

    async def send(self, message: JsonObject) -> None:
        await self.send_bytes(json.dumps(message).encode() + b"\n")

    async def next_message(self) -> JsonObject:
        """The next message from the child; requests it makes are answered first
        (a request whose answer is None is returned instead)."""
        while True:
            try:
                message = await self._inbox.receive()
            except anyio.EndOfStream:
                raise AssertionError(
                    "the child closed stdout while an answer was awaited"
                ) from None
            if "method" in message and "id" in message:
                reply = self.answer(message)
                if reply is None:
                    return message
                await self.send(reply)
                continue
            return message

    async def wait_for(self, predicate: Callable[[JsonObject], bool]) -> JsonObject:
        while not predicate(message := await self.next_message()):
            pass
        return message

    async def call(self, method: str, params: JsonObject | None = None) -> JsonObject:
        """Send a request and return the child's whole response object."""
        self._next_id += 1
        msg_id = self._next_id
        await self.send(request(msg_id, method, params))
        return await self.wait_for(lambda m: m.get("id") == msg_id and "method" not in m)

    def notifications(self, method: str = "session/update") -> list[JsonObject]:
        return [m for m in self.messages if m.get("method") == method and "id" not in m]

    async def finish(self) -> int:
        """Close the child's stdin and wait for it to exit on its own; its exit code."""
        assert self.process.stdin is not None
        await self.process.stdin.aclose()
        with anyio.fail_after(EXIT_TIMEOUT):
            return await self.process.wait()


@asynccontextmanager
async def raw_child(
    command: tuple[str, ...],
    *,
    env: dict[str, str],
    stderr_path: Path,
    cwd: Path | None = None,
    answer: RequestAnswer = refuse,
) -> AsyncIterator[RawPeer]:
    """Start ``command`` with piped stdin/stdout and stderr appended to ``stderr_path``.

    The child is killed if the block fails before :meth:`RawPeer.finish` ended it.
    """
    # Append mode: every writer of the file (the child, its children) adds at the end.
    with stderr_path.open("ab") as stderr:
        process = await anyio.open_process(
            list(command), stdin=PIPE, stdout=PIPE, stderr=stderr, env=env, cwd=cwd
        )
    peer = RawPeer(process, answer)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer.read_stdout)
            yield peer
            if process.returncode is None:  # the test did not finish the child: stop reading
                tg.cancel_scope.cancel()
    finally:
        peer._inbox.close()
        if process.returncode is None:
            process.kill()
            with anyio.CancelScope(shield=True):
                await process.wait()
        await process.aclose()


def parse_lines(lines: list[bytes]) -> list[JsonObject]:
    """Every line as a JSON-RPC 2.0 message; fails naming the first line that is not one."""
    parsed: list[JsonObject] = []
    for number, line in enumerate(lines, 1):
        try:
            message = json.loads(line)
        except ValueError as exc:
            raise AssertionError(
                f"stdout line {number} is not JSON ({exc}): {line[:200]!r}"
            ) from exc
        assert isinstance(message, dict), f"stdout line {number} is not an object: {line[:200]!r}"
        assert message.get("jsonrpc") == "2.0", f"stdout line {number}: {message}"
        assert "method" in message or "id" in message, f"stdout line {number}: {message}"
        parsed.append(message)
    return parsed
