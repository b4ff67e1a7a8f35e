"""Opening the client transport for one ACP ``McpServer`` entry.

* stdio: the command runs in the session's cwd with the client's environment variables
  over acpwire's environment scrubbed as for shell commands
  (:func:`acpwire.config.environment.scrubbed_env`: no ``OPENAI_API_KEY``, nothing the
  config home's ``.env`` defined, no variable that looks like a key, token or secret,
  except the names in ``env_passthrough``), so the agent's own secrets do not leak into
  third-party servers; its stderr goes to ours (never to stdout, which carries ACP);
* http: the MCP streamable HTTP transport, with the client's headers;
* sse: the legacy HTTP+SSE transport, with the client's headers;
* acp (MCP over the ACP connection itself): not supported, reported as such.

Each opener is an async context manager yielding the SDK's stream pair; the connection
task enters it and keeps it open.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from urllib.parse import urlsplit

import httpx2
from mcp.client._transport import TransportStreams  # the SDK's own name for the stream pair
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from acp_v1 import models as m
from acpwire.config.environment import SecretSpec, scrubbed_env

Opener = Callable[[], AbstractAsyncContextManager[TransportStreams]]

STREAM_READ_TIMEOUT = 300.0
"""Seconds an HTTP response stream may stay silent (the SDK's default for its streams)."""


class UnsupportedServer(ValueError):
    """The entry cannot be started here (unknown transport or invalid settings)."""


def transport_kind(server: m.McpServer) -> str:
    if isinstance(server, m.McpServerStdio):
        return "stdio"
    return server.type


def stdio_environment(
    env: list[m.EnvVariable], secrets: SecretSpec | None = None
) -> dict[str, str]:
    """The full environment of a stdio server: ours without ``secrets`` (and what looks
    like one, except the pass-through names), with the client's ``env`` over it."""
    result = scrubbed_env(secrets)
    for variable in env:
        if not variable.name or "=" in variable.name or "\0" in variable.name + variable.value:
            raise UnsupportedServer(f"invalid environment variable {variable.name!r}")
        result[variable.name] = variable.value
    return result


def _headers(headers: list[m.HttpHeader]) -> dict[str, str]:
    result: dict[str, str] = {}
    for header in headers:
        if not header.name.strip() or any(c in header.name + header.value for c in "\r\n\0"):
            raise UnsupportedServer(f"invalid HTTP header {header.name!r}")
        result[header.name] = header.value
    return result


def _check_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UnsupportedServer(f"invalid URL {url!r}: expected an http:// or https:// URL")


def _stdio_opener(server: m.McpServerStdio, cwd: str, secrets: SecretSpec | None) -> Opener:
    if not server.command.strip():
        raise UnsupportedServer("empty command")
    if not os.path.isdir(cwd):
        raise UnsupportedServer(f"the session directory {cwd!r} does not exist")
    params = StdioServerParameters(
        command=server.command,
        args=list(server.args),
        env=stdio_environment(server.env, secrets),
        cwd=cwd,
    )
    # Looked up per call: the process may have replaced sys.stderr since import.
    return lambda: stdio_client(params, errlog=sys.stderr)


def _http_opener(server: m.McpServerHttp, timeout: float) -> Opener:
    _check_url(server.url)
    headers = _headers(server.headers)

    @asynccontextmanager
    async def open_http() -> AsyncIterator[TransportStreams]:
        http_timeout = httpx2.Timeout(timeout, read=STREAM_READ_TIMEOUT)
        async with (
            httpx2.AsyncClient(headers=headers, timeout=http_timeout) as client,
            streamable_http_client(server.url, http_client=client) as streams,
        ):
            yield streams

    return open_http


def _sse_opener(server: m.McpServerSse, timeout: float) -> Opener:
    _check_url(server.url)
    headers = _headers(server.headers)

    @asynccontextmanager
    async def open_sse() -> AsyncIterator[TransportStreams]:
        async with sse_client(
            server.url, headers=headers, timeout=timeout, sse_read_timeout=STREAM_READ_TIMEOUT
        ) as streams:
            yield streams

    return open_sse


def opener_for(
    server: m.McpServer, cwd: str, *, timeout: float, secrets: SecretSpec | None = None
) -> Opener:
    """How to open ``server``; raises :class:`UnsupportedServer` when it cannot be.
    ``secrets``: what a stdio server's environment leaves out (default: acpwire's key and
    every variable that looks like a secret)."""
    if isinstance(server, m.McpServerStdio):
        return _stdio_opener(server, cwd, secrets)
    if isinstance(server, m.McpServerHttp):
        return _http_opener(server, timeout)
    if isinstance(server, m.McpServerSse):
        return _sse_opener(server, timeout)
    if isinstance(server, m.McpServerAcp):
        raise UnsupportedServer("MCP over ACP (type 'acp') is not supported by this agent")
    raise UnsupportedServer(f"unknown MCP server type {type(server).__name__}")
