"""McpServerHost against real stdio MCP server processes (tests/mcp/echo_server.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import anyio
import anyio.to_thread
import pytest

from acp_v1 import models as m
from acpwire.agent.cancel import CancelToken
from acpwire.agent.seam import SyncAgent
from acpwire.mcp import McpServerHost
from acpwire.mcp.host import EXTRA_KEY, NO_REGISTRY
from acpwire.server.editor.mcp_host import McpHost
from acpwire.server.sessions.state import SessionState
from acpwire.store import SessionRecord
from tests.agent.recording import make_ctx
from tests.mcp.support import (
    MakeState,
    call_in_thread,
    echo_entry,
    mcp_tool,
    process_exists,
    python_entry,
    registry,
    server_info,
    slow_echo,
)

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

ECHO_TOOLS = {"echo__echo", "echo__fail", "echo__server_info", "echo__block"}


async def test_start_registers_prefixed_tools_with_their_schemas(make_state: MakeState) -> None:
    state = make_state()
    builtin = set(registry(state).names())
    with anyio.fail_after(30):
        async with McpServerHost() as host:
            assert await host.start(state, [echo_entry()]) == []
            names = set(registry(state).names())
            assert names - builtin == ECHO_TOOLS
            echo = mcp_tool(state, "echo__echo")
            assert echo.remote_name == "echo"
            assert echo.parameters["type"] == "object"
            assert echo.parameters["required"] == ["text"]
            assert echo.parameters["properties"]["text"]["type"] == "string"
            assert "Return the given text." in echo.description
            info = mcp_tool(state, "echo__server_info")
            assert info.remote_name == "server.info"
            spec = {s["function"]["name"]: s["function"] for s in registry(state).specs()}
            assert spec["echo__echo"]["parameters"]["required"] == ["text"]


async def test_tool_call_from_a_worker_thread_returns_the_real_output(
    make_state: MakeState, tmp_path: Path
) -> None:
    state = make_state()
    entry = echo_entry(ECHO_PREFIX="p:", ECHO_GREETING="hello")
    with anyio.fail_after(30):
        async with McpServerHost() as host:
            assert await host.start(state, [entry]) == []
            outcome = await call_in_thread(mcp_tool(state, "echo__echo"), text="hi there")
            assert outcome.result_text == "p:hi there"
            assert not outcome.failed
            # Through the agent's Tool interface, as the chat loop calls it.
            ctx = make_ctx(tmp_path)
            tool = registry(state).get("echo__echo")
            assert tool is not None
            outcome = await anyio.to_thread.run_sync(tool.run, {"text": "x"}, ctx)
            assert outcome.result_text == "p:x"
            info = await server_info(state)
            assert info["cwd"] == str(tmp_path)
            assert info["greeting"] == "hello"


async def test_failing_tool_gives_a_failed_outcome(make_state: MakeState) -> None:
    state = make_state()
    with anyio.fail_after(30):
        async with McpServerHost() as host:
            assert await host.start(state, [echo_entry()]) == []
            outcome = await call_in_thread(mcp_tool(state, "echo__fail"), reason="boom")
            assert outcome.failed
            assert "failed on purpose: boom" in json.loads(outcome.result_text)["error"]


async def test_bad_servers_are_reported_and_the_good_one_works(make_state: MakeState) -> None:
    state = make_state()
    servers: list[m.McpServer] = [
        m.McpServerStdio(name="missing", command="/nonexistent/mcp-server", args=[], env=[]),
        python_entry("quitter", "pass"),
        echo_entry(),
        m.McpServerAcp(name="via-acp", server_id="x1"),
        m.McpServerStdio(
            name="bad-env", command="/bin/true", args=[], env=[m.EnvVariable(name="A=B", value="1")]
        ),
    ]
    with anyio.fail_after(30):
        async with McpServerHost() as host:
            failures = dict(await host.start(state, servers))
            assert list(failures) == ["missing", "quitter", "via-acp", "bad-env"]
            assert "No such file" in failures["missing"]
            assert "Connection closed" in failures["quitter"]
            assert "not supported" in failures["via-acp"]
            assert "invalid environment variable 'A=B'" in failures["bad-env"]
            outcome = await call_in_thread(mcp_tool(state, "echo__echo"), text="still works")
            assert outcome.result_text == "still works"
            assert [c.name for c in state.extra[EXTRA_KEY].connections] == ["echo"]


async def test_start_timeout_is_reported(make_state: MakeState) -> None:
    state = make_state()
    # Reads its stdin until it closes and never answers initialize.
    silent = python_entry("silent", "import sys; sys.stdin.read()")
    with anyio.fail_after(30):
        async with McpServerHost(start_timeout=0.5) as host:
            assert await host.start(state, [silent]) == [("silent", "did not start within 0.5 s")]


async def test_stop_unregisters_the_tools_and_ends_the_child(make_state: MakeState) -> None:
    state = make_state()
    builtin = set(registry(state).names())
    with anyio.fail_after(30):
        async with McpServerHost() as host:
            assert await host.start(state, [echo_entry()]) == []
            tool = mcp_tool(state, "echo__echo")
            pid = int(cast(int, (await server_info(state))["pid"]))
            assert process_exists(pid)
            await host.stop(state)
            assert set(registry(state).names()) == builtin
            assert EXTRA_KEY not in state.extra
            assert not process_exists(pid)
            # A call that raced the stop (the model saw the tool) fails clearly.
            outcome = await call_in_thread(tool, text="late")
            assert outcome.failed
            assert "not connected" in outcome.result_text
            await host.stop(state)  # idempotent


async def test_restart_after_stop_reuses_the_same_names(make_state: MakeState) -> None:
    state = make_state()
    with anyio.fail_after(30):
        async with McpServerHost() as host:
            assert await host.start(state, [echo_entry()]) == []
            await host.stop(state)
            assert await host.start(state, [echo_entry()]) == []
            outcome = await call_in_thread(mcp_tool(state, "echo__echo"), text="again")
            assert outcome.result_text == "again"


async def test_shutdown_closes_every_session(make_state: MakeState) -> None:
    first, second = make_state("a"), make_state("b")
    with anyio.fail_after(30):
        async with McpServerHost() as host:
            assert await host.start(first, [echo_entry()]) == []
            assert await host.start(second, [echo_entry("other")]) == []
            pids = [
                int(cast(int, (await server_info(first))["pid"])),
                int(cast(int, (await server_info(second, "other"))["pid"])),
            ]
            await host.shutdown()
            assert not any(process_exists(pid) for pid in pids)
            assert not ECHO_TOOLS & set(registry(first).names())
            assert "other__echo" not in registry(second).names()
            assert await host.start(first, [echo_entry()]) == [
                ("echo", "the MCP host is shut down")
            ]


async def test_leaving_the_host_stops_the_servers(make_state: MakeState) -> None:
    state = make_state()
    with anyio.fail_after(30):
        async with McpServerHost() as host:
            assert await host.start(state, [echo_entry()]) == []
            pid = int(cast(int, (await server_info(state))["pid"]))
        assert not process_exists(pid)
        assert "echo__echo" not in registry(state).names()


async def test_call_timeout_and_cancellation(make_state: MakeState) -> None:
    state = make_state()
    with anyio.fail_after(30):
        async with McpServerHost(call_timeout=0.5) as host:
            assert await host.start(state, [echo_entry()]) == []
            block = mcp_tool(state, "echo__block")
            outcome = await call_in_thread(block)
            assert outcome.failed
            assert "timed out after 0.5 s" in outcome.result_text
            # Cancelling the turn's token releases the worker thread at once.
            token = CancelToken()
            async with anyio.create_task_group() as group:
                results = []

                async def call() -> None:
                    results.append(await anyio.to_thread.run_sync(block.call, {}, token))

                group.start_soon(call)
                token.cancel()
            assert results[0].failed
            assert "cancelled" in results[0].result_text
            # The connection still serves calls after a timeout and a cancellation.
            outcome = await call_in_thread(mcp_tool(state, "echo__echo"), text="alive")
            assert outcome.result_text == "alive"


async def test_calling_on_the_event_loop_thread_fails_instead_of_deadlocking(
    make_state: MakeState,
) -> None:
    state = make_state()
    with anyio.fail_after(30):
        async with McpServerHost() as host:
            assert await host.start(state, [echo_entry()]) == []
            outcome = mcp_tool(state, "echo__echo").call({"text": "x"})
            assert outcome.failed
            assert "event loop thread" in outcome.result_text


async def test_agent_without_a_tool_registry_gets_failures(tmp_path: Path) -> None:
    state = SessionState(
        record=SessionRecord(id="s", cwd=str(tmp_path)), agent=cast(SyncAgent, object())
    )
    with anyio.fail_after(10):
        async with McpServerHost() as host:
            failures = await host.start(state, [echo_entry(), echo_entry("two")])
            assert failures == [("echo", NO_REGISTRY), ("two", NO_REGISTRY)]
            assert EXTRA_KEY not in state.extra


async def test_start_needs_the_host_entered(make_state: MakeState) -> None:
    with pytest.raises(RuntimeError, match="async with host"):
        await McpServerHost().start(make_state(), [echo_entry()])


def test_the_host_implements_the_backend_seam() -> None:
    host: McpHost = McpServerHost()  # checked by mypy
    assert host.supports_http and host.supports_sse


async def test_a_server_slower_than_the_wait_joins_later(make_state: MakeState) -> None:
    """``start`` returns after ``wait_s`` with the slow server still starting; its tools
    are registered when it is ready, and ``on_late`` hears "pending" then "ready"."""
    state = make_state()
    events: list[tuple[str, str, str]] = []
    ready = anyio.Event()

    async def on_late(name: str, status: str, detail: str) -> None:
        events.append((name, status, detail))
        if status != "pending":
            ready.set()

    with anyio.fail_after(30):
        async with McpServerHost() as host:
            started = anyio.current_time()
            failures = await host.start(
                state, [slow_echo("slow", 2.0)], wait_s=0.5, on_late=on_late
            )
            assert anyio.current_time() - started < 1.8  # did not wait for the slow one
            assert failures == []
            assert "slow__echo" not in registry(state).names()
            await ready.wait()
            assert events == [("slow", "pending", ""), ("slow", "ready", "4 tools")]
            outcome = await call_in_thread(mcp_tool(state, "slow__echo"), text="late")
            assert outcome.result_text == "late" and not outcome.failed


async def test_a_session_stopped_while_its_server_starts_hears_nothing_more(
    make_state: MakeState,
) -> None:
    state = make_state()
    events: list[tuple[str, str, str]] = []

    async def on_late(name: str, status: str, detail: str) -> None:
        events.append((name, status, detail))

    with anyio.fail_after(30):
        async with McpServerHost() as host:
            assert (
                await host.start(state, [slow_echo("slow", 2.0)], wait_s=0.3, on_late=on_late) == []
            )
            await host.stop(state)
            await anyio.sleep(2.5)  # past the server's start-up
            assert events == [("slow", "pending", "")]
            assert "slow__echo" not in registry(state).names()
