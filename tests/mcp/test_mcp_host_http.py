"""McpServerHost against the echo server served over streamable HTTP and SSE on 127.0.0.1.

The server runs in-process under uvicorn on a socket bound and listening before the
client connects, so no readiness wait is needed: early connections wait in the backlog.
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest
import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send

from acp_v1 import models as m
from acpwire.mcp import McpServerHost
from acpwire.mcp.host import EXTRA_KEY
from tests.mcp.echo_server import build_server
from tests.mcp.support import MakeState, call_in_thread, mcp_tool, registry

pytestmark = pytest.mark.anyio


class HeaderRecorder:
    """ASGI middleware keeping the headers of every HTTP request (to check ours arrive)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.seen: list[dict[str, str]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.seen.append({k.decode(): v.decode() for k, v in scope["headers"]})
        await self.app(scope, receive, send)


@asynccontextmanager
async def serve(app: ASGIApp) -> AsyncIterator[str]:
    """Serve ``app`` on 127.0.0.1; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve, [sock])
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True


HEADERS = [m.HttpHeader(name="X-Test-Token", value="secret")]


async def test_streamable_http_server(make_state: MakeState) -> None:
    state = make_state()
    app = HeaderRecorder(build_server().streamable_http_app())
    with anyio.fail_after(30):
        async with serve(app) as base, McpServerHost() as host:
            assert host.supports_http
            entry = m.McpServerHttp(name="web", url=f"{base}/mcp", headers=HEADERS)
            assert await host.start(state, [entry]) == []
            assert {"web__echo", "web__fail", "web__server_info"} <= set(registry(state).names())
            outcome = await call_in_thread(mcp_tool(state, "web__echo"), text="over http")
            assert outcome.result_text == "over http"
            assert not outcome.failed
            failed = await call_in_thread(mcp_tool(state, "web__fail"), reason="r")
            assert failed.failed
            assert "failed on purpose: r" in json.loads(failed.result_text)["error"]
            assert app.seen
            assert all(h.get("x-test-token") == "secret" for h in app.seen)
            await host.stop(state)
            assert "web__echo" not in registry(state).names()
            assert EXTRA_KEY not in state.extra


async def test_sse_server(make_state: MakeState) -> None:
    state = make_state()
    app = HeaderRecorder(build_server().sse_app())
    with anyio.fail_after(30):
        async with serve(app) as base, McpServerHost() as host:
            assert host.supports_sse
            entry = m.McpServerSse(name="events", url=f"{base}/sse", headers=HEADERS)
            assert await host.start(state, [entry]) == []
            outcome = await call_in_thread(mcp_tool(state, "events__echo"), text="over sse")
            assert outcome.result_text == "over sse"
            assert all(h.get("x-test-token") == "secret" for h in app.seen)
            await host.stop(state)
            assert "events__echo" not in registry(state).names()


async def test_unreachable_http_server_is_reported(make_state: MakeState) -> None:
    state = make_state()
    # A port that was just free: nothing listens there.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    entries: list[m.McpServer] = [
        m.McpServerHttp(name="gone", url=f"http://127.0.0.1:{port}/mcp", headers=[]),
        m.McpServerHttp(name="ftp", url="ftp://example.invalid/mcp", headers=[]),
    ]
    with anyio.fail_after(30):
        async with McpServerHost() as host:
            failures = dict(await host.start(state, entries))
            assert "ConnectError" in failures["gone"]
            assert "invalid URL" in failures["ftp"]
