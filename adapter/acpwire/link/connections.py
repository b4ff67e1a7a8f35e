"""Wire a typed agent or client to a byte stream pair: the ACP connection objects.

``AgentConnection`` is an agent's end: it serves the agent's methods and gives the agent
a typed :class:`acp_v1.peers.ClientPeer` to call the client (``session/update``,
``fs/*``, ``terminal/*``, ``session/request_permission``). ``ClientConnection`` is the
mirror image for a client driving an agent. Both run until the stream ends.
:func:`spawn_agent` starts an agent command and hands back a served client connection to
it, its stderr in a logger, the process ended and reaped when the block is left.

The handler factory receives the peer and returns the handler: an
:class:`acp_v1.interfaces.Agent` subclass for ``AgentConnection`` and a ``Client``
subclass for ``ClientConnection`` (mypy refuses the other; binding checks the methods'
names, :mod:`acpwire.link.handlers`). A peer's invalid result raises
:class:`~acp_v1.peers.InvalidResult`, re-exported here.

A call the peer's ``initialize`` did not advertise raises
:class:`~acpwire.link.handlers.CapabilityError` before anything is sent: an agent's
``fs/*`` or ``terminal/*`` to a client without the capability, a client's
``session/load`` to an agent without ``loadSession``, an image in a prompt to an agent
without ``promptCapabilities.image`` (the rules of :mod:`acpwire.probe.requirements`).
``check_capabilities=False`` sends such calls all the same, for a test of how the peer
answers them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Generic, TypeVar

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from acp_v1.interfaces import Agent, Client
from acp_v1.peers import AgentPeer, ClientPeer, InvalidResult
from acpwire.rpc import DEFAULT_MAX_LINE_BYTES, Connection

from ._child import StderrTail, describe_exit, log_stderr, reap
from .endpoint import AcpEndpoint, ExtensionHandler, Role

__all__ = [
    "AGENT_STDERR",
    "AgentConnection",
    "ClientConnection",
    "InvalidResult",
    "SpawnedAgent",
    "spawn_agent",
]

H = TypeVar("H")
A = TypeVar("A", bound=Agent)
C = TypeVar("C", bound=Client)
P = TypeVar("P", AgentPeer, ClientPeer)


class _Link(Generic[H, P]):
    role: Role
    peer_type: type[P]

    def __init__(
        self,
        make_handler: Callable[[P], H],
        receive: ByteReceiveStream,
        send: ByteSendStream,
        *,
        unstable: bool = False,
        extensions: ExtensionHandler | None = None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        error_messages: bool | None = None,
        check_capabilities: bool = True,
    ) -> None:
        self.endpoint = AcpEndpoint(self.role, unstable=unstable, extensions=extensions)
        self.connection = Connection(
            receive,
            send,
            self.endpoint,
            max_line_bytes=max_line_bytes,
            decode=self.endpoint.decode,
            name=self.role,
            error_messages=error_messages,
        )
        # No call the peer's initialize did not advertise (the client's params, read by
        # the agent's endpoint; the agent's answer, read by the client's from our request).
        # ``check_capabilities=False``: sent all the same (a test of how the peer answers).
        if check_capabilities:
            self.connection.before_request = self.endpoint.check_outgoing
            if self.role == "client":
                self.connection.after_response = self.endpoint.observe_answer
        self.peer: P = self.peer_type(self.connection)
        self.handler: H = make_handler(self.peer)
        self.endpoint.bind(self.handler)

    async def serve(self) -> None:
        """Serve until the peer closes the stream."""
        await self.connection.serve()

    async def close(self) -> None:
        await self.connection.close()


class AgentConnection(_Link[A, ClientPeer]):
    """An agent's end of a connection; ``peer`` is the client."""

    role: Role = "agent"
    peer_type = ClientPeer


class ClientConnection(_Link[C, AgentPeer]):
    """A client's end of a connection; ``peer`` is the agent."""

    role: Role = "client"
    peer_type = AgentPeer


class SpawnedAgent(ClientConnection[C]):
    """A client connection to an agent process (what :func:`spawn_agent` yields)."""

    process: Process
    """The agent's process (``pid``; ``returncode`` once the block has ended)."""


AGENT_STDERR = logging.getLogger("acpwire.agent_stderr")
"""Where :func:`spawn_agent` logs the child's stderr by default (INFO, one record a line)."""


@asynccontextmanager
async def spawn_agent(
    make_handler: Callable[[AgentPeer], C],
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    stderr_logger: logging.Logger | None = None,
    unstable: bool = False,
    extensions: ExtensionHandler | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    grace_s: float = 2.0,
    error_messages: bool | None = None,
    check_capabilities: bool = True,
) -> AsyncIterator[SpawnedAgent[C]]:
    """Run the agent ``command`` (argv) and serve a client connection to it in the block.

    ``make_handler`` builds the client handler from the agent's typed peer, as for
    :class:`ClientConnection`. ``env`` replaces the environment (None: inherit). The
    child's stderr is read throughout and logged line by line on ``stderr_logger``
    (default :data:`AGENT_STDERR`), so a chatty agent never blocks on a full pipe. When
    the block ends, normally or by an error, the child's stdin is closed, then it gets
    ``grace_s`` to exit, is terminated, and after another ``grace_s`` killed; it is always
    reaped. An agent that exits early fails the pending requests with
    :class:`~acpwire.rpc.ConnectionClosedError` saying how it ended (its exit code and its
    last line on stderr). ``error_messages``: whether an error
    answer for an exception of the handler carries its message (None:
    ``ACPWIRE_ERROR_MESSAGES``); ``check_capabilities``: refuse calls the agent's
    ``initialize`` answer did not advertise (see above). An error raised in the block
    comes out as itself, not wrapped in an exception group.
    """
    if isinstance(command, str):
        raise TypeError("command is an argv sequence, e.g. ['acpwire'] or shlex.split(line)")
    import subprocess  # only here: the client side of a connection needs no child

    argv = [os.fspath(part) for part in command]
    process = await anyio.open_process(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=None if env is None else dict(env),
        cwd=cwd,
    )
    assert process.stdin is not None and process.stdout is not None
    assert process.stderr is not None
    try:
        link = SpawnedAgent(
            make_handler,
            process.stdout,
            process.stdin,
            unstable=unstable,
            extensions=extensions,
            max_line_bytes=max_line_bytes,
            error_messages=error_messages,
            check_capabilities=check_capabilities,
        )
    except BaseException:  # a handler that does not fit: the child must not outlive it
        with anyio.CancelScope(shield=True):
            await process.stdin.aclose()
            await reap(process, grace_s)
            await process.aclose()
        raise
    link.process = process
    label = f"{Path(argv[0]).name}[{process.pid}]"
    tail = StderrTail()

    async def why_it_ended() -> str:
        return await describe_exit(process, tail)

    link.connection.describe_end = why_it_ended
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(log_stderr, process.stderr, stderr_logger or AGENT_STDERR, label, tail)
            tg.start_soon(link.serve)
            try:
                yield link
            finally:
                with anyio.CancelScope(shield=True):
                    await link.close()
                    await reap(process, grace_s)
                tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from group.exceptions[0].__cause__
        raise
    finally:
        with anyio.CancelScope(shield=True):
            await reap(process, grace_s)  # the task group failed before the block ended
