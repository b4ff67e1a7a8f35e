"""The staged start: the front desk answers initialize, the backend is built right after."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_v1 import models as m
from acpwire.mcp import McpServerHost
from acpwire.rpc import memory_pair
from acpwire.server.app import Runtime
from acpwire.server.methods.advertised import DEFAULT_MCP_TRANSPORTS
from acpwire.server.process.front_desk import FrontDesk, Station, serve_connection
from tests.backend.harness import NoMcp, make_settings, workspace_of
from tests.backend.test_backend_wire import Lines, request
from tests.support.fake_llm import FakeLLM

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]


class CountingRuntime:
    """The runtime callable of a :class:`Station`: counts calls, notes what the client
    had already received when the backend was built."""

    def __init__(self, runtime: Runtime, answered: anyio.Event) -> None:
        self.runtime = runtime
        self.answered = answered
        self.calls = 0
        self.answered_before_build: list[bool] = []

    def __call__(self) -> Runtime:
        self.calls += 1
        self.answered_before_build.append(self.answered.is_set())
        return self.runtime


async def answers(lines: Lines, *ids: int) -> dict[int, dict[str, Any]]:
    """The answers to ``ids`` in whatever order they come (skipping notifications)."""
    found: dict[int, dict[str, Any]] = {}
    while len(found) < len(ids):
        message = await lines.next()
        if "method" not in message:
            found[message["id"]] = message
    assert set(found) == set(ids)
    return found


async def _run(tmp_path: Path, script: Any) -> CountingRuntime:
    with FakeLLM() as llm:
        runtime = Runtime.create(make_settings(tmp_path / "home", llm.base_url))
        answered = anyio.Event()
        counting = CountingRuntime(runtime, answered)
        station = Station(runtime.factory, counting, mcp=NoMcp())
        (a_recv, a_send), (c_recv, c_send) = memory_pair()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(serve_connection, station, a_recv, a_send)
                await script(Lines(c_recv), c_send, answered)
                tg.cancel_scope.cancel()
        finally:
            runtime.close()
        return counting


async def test_the_backend_is_built_once_after_the_initialize_answer(tmp_path: Path) -> None:
    cwd = str(workspace_of(tmp_path))

    async def script(lines: Lines, send: Any, answered: anyio.Event) -> None:
        await send.send(request(1, "initialize", {"protocolVersion": 1}))
        assert (await lines.answer(1))["result"]["protocolVersion"] == 1
        answered.set()
        await send.send(request(2, "session/new", {"cwd": cwd, "mcpServers": []}))
        assert "sessionId" in (await lines.answer(2))["result"]
        await send.send(request(3, "session/list", {}))
        # Served by the backend; the new session has no conversation yet, so is not listed.
        assert (await lines.answer(3))["result"]["sessions"] == []

    counting = await _run(tmp_path, script)
    assert counting.calls == 1
    # In-memory streams deliver on send: the answer was out before the backend was built.
    assert counting.answered_before_build == [True]


async def test_requests_pipelined_behind_initialize_wait_for_the_backend(
    tmp_path: Path,
) -> None:
    cwd = str(workspace_of(tmp_path))

    async def script(lines: Lines, send: Any, answered: anyio.Event) -> None:
        await send.send(
            request(1, "initialize", {"protocolVersion": 1})
            + request(2, "session/new", {"cwd": cwd, "mcpServers": []})
            + request(3, "session/list", {})
        )
        got = await answers(lines, 1, 2, 3)  # JSON-RPC answers may come in any order
        assert "protocolVersion" in got[1]["result"] and "sessionId" in got[2]["result"]
        assert "sessions" in got[3]["result"]

    assert (await _run(tmp_path, script)).calls == 1


async def test_a_client_that_skips_initialize_gets_the_backend_all_the_same(
    tmp_path: Path,
) -> None:
    cwd = str(workspace_of(tmp_path))

    async def script(lines: Lines, send: Any, answered: anyio.Event) -> None:
        await send.send(request(1, "session/new", {"cwd": cwd, "mcpServers": []}))
        assert "sessionId" in (await lines.answer(1))["result"]

    assert (await _run(tmp_path, script)).calls == 1


def test_default_mcp_transports_are_what_the_mcp_host_connects() -> None:
    host = McpServerHost()
    assert {"http": host.supports_http, "sse": host.supports_sse} == DEFAULT_MCP_TRANSPORTS


def _backend_process(script: str, home: Path) -> subprocess.Popen[bytes]:
    """``script`` (which ends by running ``acpwire``'s main) in a fresh interpreter, on
    pipes; it writes a ``SEEN {json}`` line to stderr at exit."""
    return subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "ACPWIRE_HOME": str(home)},
    )


def _seen(err: bytes) -> dict[str, Any]:
    line = next(x for x in err.decode().splitlines() if x.startswith("SEEN "))
    seen: dict[str, Any] = json.loads(line.removeprefix("SEEN "))
    return seen


def test_over_stdio_initialize_is_answered_before_the_session_machinery_loads(
    tmp_path: Path,
) -> None:
    """The real command: what is imported when the answer is written, and after it. The
    answer is written before the event loop starts (acpwire.server.process.first_answer): neither
    anyio nor asyncio is loaded yet."""
    script = """
import atexit, gc, json, sys
from acpwire.rpc.stdio import ClaimedStdio

seen = {}
write_all = ClaimedStdio.write_all

def spy(self, data):
    if "at_answer" not in seen:
        seen["at_answer"] = "acpwire.server.methods.backend" in sys.modules
        seen["loop_at_answer"] = sorted({"anyio", "asyncio"} & set(sys.modules))
        seen["gc_at_answer"] = gc.isenabled()
    write_all(self, data)

ClaimedStdio.write_all = spy
atexit.register(lambda: sys.stderr.write("SEEN " + json.dumps({
    **seen, "at_exit": "acpwire.server.methods.backend" in sys.modules,
    "gc_at_exit": gc.isenabled(), "frozen": gc.get_freeze_count()}) + "\\n"))
from acpwire.cli import main
main([])
"""
    with _backend_process(script, tmp_path / "home") as child:
        assert child.stdin is not None and child.stdout is not None
        got = []
        for n, method in enumerate(("initialize", "session/list"), 1):  # as editors do
            child.stdin.write(request(n, method, {"protocolVersion": 1} if n == 1 else {}))
            child.stdin.flush()
            got.append(json.loads(child.stdout.readline()))
        _, err = child.communicate(timeout=60)
    assert [a["id"] for a in got] == [1, 2] and "sessions" in got[1]["result"]
    seen = _seen(err)
    assert seen["at_answer"] is False and seen["at_exit"] is True
    assert seen["loop_at_answer"] == []
    # The collector is paused during start-up and resumes once the backend is up, with
    # the start-up objects frozen out of its scans.
    assert seen["gc_at_answer"] is False and seen["gc_at_exit"] is True
    assert seen["frozen"] > 10_000


async def test_initialize_answered_after_the_backend_was_built_hands_it_the_probe(
    tmp_path: Path,
) -> None:
    """A client pipelining requests behind initialize may get the backend built first."""

    class Backend:
        def __init__(self) -> None:
            self.adopted: list[object] = []

        def adopt(self, probe: object) -> None:
            self.adopted.append(probe)

    with FakeLLM() as llm:
        runtime = Runtime.create(make_settings(tmp_path / "home", llm.base_url))
        try:
            desk = FrontDesk(None, Station(runtime.factory, lambda: runtime))  # type: ignore[arg-type]
            backend = Backend()
            desk.backend = backend  # type: ignore[assignment]
            params = m.InitializeRequest(
                protocol_version=1, client_info=m.Implementation(name="zed", version="1")
            )
            assert (await desk.initialize(params)).protocol_version == 1
            assert backend.adopted == [desk.probe] and desk.probe is not None
            assert desk.probe.client_name == "zed"
        finally:
            runtime.close()


def test_the_collector_resumes_even_when_no_backend_is_ever_built(tmp_path: Path) -> None:
    script = """
import atexit, gc, json, sys
import acpwire.server.stdio as stdio
stdio.SETTLE_AFTER_S = 0.2
settle = stdio.settle_gc
def settle_and_say():
    settle()
    sys.stderr.write("SETTLED\\n")
    sys.stderr.flush()
stdio.settle_gc = settle_and_say
atexit.register(lambda: sys.stderr.write("SEEN " + json.dumps({
    "backend": "acpwire.server.methods.backend" in sys.modules, "gc": gc.isenabled(),
    "frozen": gc.get_freeze_count()}) + "\\n"))
from acpwire.cli import main
main([])
"""
    with _backend_process(script, tmp_path / "home") as child:
        assert child.stdin is not None and child.stderr is not None
        child.stdin.write(b'{"jsonrpc": "2.0", "method": "no/such_note"}\n')  # nothing more
        child.stdin.flush()
        # Stdin stays open until the fallback has run, however slow the start-up is.
        for line in child.stderr:
            if line == b"SETTLED\n":
                break
        _, err = child.communicate(timeout=60)
    seen = _seen(err)
    assert seen == {"backend": False, "gc": True, "frozen": seen["frozen"]} and seen["frozen"] > 0


async def test_an_initialize_finishing_while_the_backend_is_built_reaches_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request behind which initialize completes during the build (the MCP host is
    slow to enter): the backend still acts on the client's initialize."""
    import acpwire.server.app as app

    built: list[Any] = []
    original = app.build_backend

    def capture(*args: Any) -> Any:
        backend, host = original(*args)
        built.append(backend)
        return backend, host

    monkeypatch.setattr(app, "build_backend", capture)
    gate = anyio.Event()

    class SlowHost(NoMcp):
        async def __aenter__(self) -> SlowHost:
            await gate.wait()
            return self

    with FakeLLM() as llm:
        runtime = Runtime.create(make_settings(tmp_path / "home", llm.base_url))
        station = Station(runtime.factory, lambda: runtime, mcp=SlowHost())
        (a_recv, a_send), (c_recv, c_send) = memory_pair()
        lines = Lines(c_recv)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(serve_connection, station, a_recv, a_send)
                await c_send.send(request(1, "session/list", {}))  # starts the build
                await anyio.wait_all_tasks_blocked()
                assert len(built) == 1 and built[0].probe is None
                init = {"protocolVersion": 1, "clientInfo": {"name": "zed", "version": "1"}}
                await c_send.send(request(2, "initialize", init))
                assert "protocolVersion" in (await lines.answer(2))["result"]
                gate.set()
                assert "sessions" in (await lines.answer(1))["result"]
                assert built[0].probe is not None and built[0].probe.client_name == "zed"
                tg.cancel_scope.cancel()
        finally:
            runtime.close()
