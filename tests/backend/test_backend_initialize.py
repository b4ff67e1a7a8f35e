"""``initialize``, ``authenticate`` and ``logout`` against the real backend, and what
``session/new`` answers when no model provider is configured."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import anyio
import pytest

from acp_v1 import models as m
from acpwire.rpc import RpcError
from acpwire.server.app import Runtime
from tests.backend.harness import (
    FS_CAPS,
    STEP_S,
    connected,
    initialize,
    make_settings,
    rig,
    workspace_of,
)

pytestmark = pytest.mark.anyio


@contextmanager
def closed_ports(*ports: int) -> Iterator[list[int]]:
    """Hold loopback ports bound but not listening: connecting to them is refused."""
    with ExitStack() as stack:
        held: list[int] = []
        for port in ports:
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                pytest.skip(f"127.0.0.1:{port} is in use here; cannot prove nothing answers")
            held.append(sock.getsockname()[1])
        yield held


async def test_protocol_version_is_negotiated_to_1(tmp_path: Path) -> None:
    runtime = Runtime.create(make_settings(tmp_path / "home", None))
    try:
        for asked in (1, 99):
            async with connected(runtime, init=False) as client:
                answer = await initialize(client, protocol_version=asked)
                assert answer.protocol_version == 1
    finally:
        runtime.close()


async def test_capabilities_are_truthful(tmp_path: Path) -> None:
    runtime = Runtime.create(make_settings(tmp_path / "home", None))
    try:
        for unstable in (True, False):
            async with connected(runtime, init=False, unstable=unstable) as client:
                caps = (await initialize(client)).agent_capabilities
                assert caps is not None
                assert caps.load_session is True
                prompt = caps.prompt_capabilities
                assert prompt is not None
                assert (prompt.image, prompt.embedded_context, prompt.audio) == (True, True, False)
                sessions = caps.session_capabilities
                assert sessions is not None
                assert sessions.list is not None and sessions.resume is not None
                assert sessions.close is not None and sessions.delete is not None
                assert (sessions.fork is not None) is unstable
                assert caps.auth is not None and caps.auth.logout is not None
    finally:
        runtime.close()


async def test_terminal_auth_method_only_for_clients_that_can_run_it(tmp_path: Path) -> None:
    runtime = Runtime.create(make_settings(tmp_path / "home", None))
    terminal = m.ClientCapabilities(auth=m.AuthCapabilities(terminal=True))
    try:
        for caps, expect_terminal in ((terminal, True), (FS_CAPS, False), (None, False)):
            async with connected(runtime, init=False) as client:
                request = m.InitializeRequest(protocol_version=1, client_capabilities=caps)
                with anyio.fail_after(STEP_S):
                    raw = await client.connection.request("initialize", request)
                assert isinstance(raw, dict)
                methods = raw["authMethods"]
                assert methods[0]["id"] == "acpwire-setup"
                # On the wire an agent method has no "type" (or "agent").
                types = [x.get("type", "agent") for x in methods]
                assert ("terminal" in types) is expect_terminal
                if expect_terminal:
                    assert methods[0]["args"] == ["--setup"]
    finally:
        runtime.close()


async def test_typed_client_reads_agent_auth_method_as_agent(tmp_path: Path) -> None:
    runtime = Runtime.create(make_settings(tmp_path / "home", None))
    try:
        async with connected(runtime, init=False) as client:
            answer = await initialize(client, caps=FS_CAPS)
            assert isinstance((answer.auth_methods or [])[0], m.AuthMethodAgent)
    finally:
        runtime.close()


async def _expect_error(code: int, call: object) -> RpcError:
    with anyio.fail_after(STEP_S), pytest.raises(RpcError) as info:
        await call  # type: ignore[misc]  # any awaitable peer call
    assert info.value.code == code, info.value
    return info.value


async def test_no_provider_answers_auth_required(tmp_path: Path) -> None:
    with closed_ports(0) as (port,):
        # An endpoint that refuses connections and no model: nothing can be listed.
        settings = make_settings(tmp_path / "home", f"http://127.0.0.1:{port}/v1", model=None)
        runtime = Runtime.create(settings)
        try:
            async with connected(runtime) as client:
                request = m.NewSessionRequest(cwd=str(workspace_of(tmp_path)), mcp_servers=[])
                error = await _expect_error(-32000, client.peer.session_new(request))
                assert "No model provider configured" in error.message
                assert f"127.0.0.1:{port}" in error.message
                assert "acpwire --setup" in error.message
                # The setup method is known, but it cannot succeed without a provider.
                auth = m.AuthenticateRequest(method_id="acpwire-setup")
                await _expect_error(-32000, client.peer.authenticate(auth))
                bogus = m.AuthenticateRequest(method_id="bogus")
                await _expect_error(-32602, client.peer.authenticate(bogus))
        finally:
            runtime.close()


async def test_no_endpoint_and_no_local_server_answers_auth_required(tmp_path: Path) -> None:
    with closed_ports(11434, 8080, 1234):
        runtime = Runtime.create(make_settings(tmp_path / "home", None, model=None))
        try:
            async with connected(runtime) as client:
                request = m.NewSessionRequest(cwd=str(workspace_of(tmp_path)), mcp_servers=[])
                error = await _expect_error(-32000, client.peer.session_new(request))
                assert "no model endpoint configured" in error.message
                assert "11434" in error.message
        finally:
            runtime.close()


async def test_authenticate_unknown_method_and_logout(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        await _expect_error(
            -32602, r.peer.authenticate(m.AuthenticateRequest(method_id="no-such-method"))
        )
        first = await r.new()
        with anyio.fail_after(STEP_S):
            await r.peer.logout(m.LogoutRequest())
        request = m.NewSessionRequest(cwd=str(r.workspace), mcp_servers=[])
        error = await _expect_error(-32000, r.peer.session_new(request))
        assert "Logged out" in error.message
        with anyio.fail_after(STEP_S):
            await r.peer.authenticate(m.AuthenticateRequest(method_id="acpwire-setup"))
        second = await r.new()
        assert second != first


def test_advertised_capabilities_carry_no_unstable_only_fields() -> None:
    """Capability objects come from the unstable superset of the schema; fields only the
    unstable schema has (MCP over ACP) are left out of the wire form, not sent as false."""
    from acpwire.server.methods.advertised import agent_capabilities

    caps = agent_capabilities(unstable=False, mcp_http=True, mcp_sse=False)
    wire = caps.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert wire["mcpCapabilities"] == {"http": True, "sse": False}
    assert "fork" not in wire["sessionCapabilities"]
