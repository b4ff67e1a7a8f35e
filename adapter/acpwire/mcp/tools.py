"""MCP tools as tools of the session's agent, callable from its worker thread.

The agent runs tools synchronously in a worker thread, while the MCP client session lives
on the event loop. :class:`McpTool` bridges the two: it submits the call to the loop with
:func:`asyncio.run_coroutine_threadsafe` and blocks the worker thread on the result,
bounded by a timeout and released at once when the turn is cancelled. A call is first
offered to the turn's ``approve_access`` hook (Default mode asks the user).
:func:`offer_tools` adds a connected server's tools to an agent's tool sink.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp_types as types

from acpwire.agent.cancel import CancelToken
from acpwire.agent.embedded.tools.base import ToolContext, ToolOutcome, failure
from acpwire.agent.seam import AccessProposal

from .naming import allocate_names
from .results import describe_error, outcome_from_result

if TYPE_CHECKING:
    from .connection import ServerConnection
    from .registry import ToolSink

logger = logging.getLogger(__name__)

Invoke = Callable[[str, dict[str, Any]], Coroutine[Any, Any, types.CallToolResult]]
"""Calls one tool of a connected server by its MCP name (runs on the event loop)."""

_BACKSTOP = 5.0
"""Extra seconds the worker waits beyond the call timeout the loop side enforces."""


def _on_loop_thread(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


@dataclass(frozen=True, slots=True)
class McpTool:
    """One tool of one MCP server, registered on the agent under ``name``."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    server: str
    remote_name: str
    loop: asyncio.AbstractEventLoop
    invoke: Invoke
    timeout: float

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        detail = json.dumps(args, ensure_ascii=False, sort_keys=True)
        refused = ctx.hooks.approve_access(ctx.call_id, AccessProposal("tool", self.name, detail))
        if refused is not None:
            return failure(refused)
        return self.call(args, ctx.cancel)

    def call(self, args: dict[str, Any], cancel: CancelToken | None = None) -> ToolOutcome:
        """Call the tool from a worker thread and wait for its outcome.

        Never call this on the event loop thread: it would wait for the loop it blocks.
        """
        where = f"MCP tool {self.remote_name!r} of server {self.server!r}"
        if _on_loop_thread(self.loop):
            return failure(f"{where} was called on the event loop thread; it must run in a worker")
        if cancel is not None and cancel.cancelled:
            return failure(f"{where} was not called: the turn was cancelled")
        coroutine = self.invoke(self.remote_name, args)
        try:
            future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        except RuntimeError as exc:
            coroutine.close()
            return failure(f"{where} cannot run: {exc}")

        def abandon() -> None:
            # Thread-safe: the loop-side task is cancelled with call_soon_threadsafe.
            future.cancel()

        unregister = cancel.on_cancel(abandon) if cancel is not None else None
        try:
            result = future.result(timeout=self.timeout + _BACKSTOP)
        except concurrent.futures.CancelledError:
            return failure(f"{where} was cancelled")
        except TimeoutError:
            future.cancel()
            return failure(f"{where} timed out after {self.timeout:g} s")
        except Exception as exc:
            return failure(f"{where} failed: {describe_error(exc)}")
        finally:
            if unregister is not None:
                unregister()
        return outcome_from_result(result)


def offer_tools(
    connection: ServerConnection, sink: ToolSink, loop: asyncio.AbstractEventLoop, timeout: float
) -> list[str]:
    """Add the tools of a connected server to ``sink`` as ``<server>__<tool>``; returns
    the names added (a tool whose schema is not an object, or that the sink refuses, is
    skipped and logged)."""
    names = allocate_names(connection.name, [tool.name for tool in connection.tools], sink.names())
    added: list[str] = []
    for name, tool in zip(names, connection.tools, strict=True):
        parameters = _parameters(tool)
        if parameters is None:
            logger.warning(
                "MCP server %r: tool %r skipped: its input schema is not an object schema",
                connection.name,
                tool.name,
            )
            continue
        offered = McpTool(
            name=name,
            description=_description(connection.name, tool),
            parameters=parameters,
            server=connection.name,
            remote_name=tool.name,
            loop=loop,
            invoke=connection.call_tool,
            timeout=timeout,
        )
        try:
            sink.add(offered)
        except ValueError as exc:
            logger.warning("MCP server %r: tool %r skipped: %s", connection.name, tool.name, exc)
            continue
        added.append(name)
    return added


def _parameters(tool: types.Tool) -> dict[str, Any] | None:
    """The tool's input schema as an object schema, or None when it is not one."""
    schema = dict(tool.input_schema)
    kind = schema.setdefault("type", "object")
    if kind != "object":
        return None
    schema.setdefault("properties", {})
    return schema


def _description(server: str, tool: types.Tool) -> str:
    origin = f"(tool {tool.name!r} of MCP server {server!r})"
    text = (tool.description or tool.title or "").strip()
    return f"{text} {origin}" if text else origin
