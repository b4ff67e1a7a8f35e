"""The benchmark's ACP client: acpwire's ``ClientConnection`` over a child process's pipes.

Every backend and agent process is driven by this same client, so client-side costs are
equal on both sides of a comparison. It records the text each session streams and lets a
caller wait until a session has received a given amount of it.
"""

from __future__ import annotations

import logging
import os
import subprocess
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
from anyio.abc import Process

from acp_v1 import models as m
from acp_v1.interfaces import Client
from acp_v1.peers import AgentPeer
from acpwire.link import ClientConnection

from .results import REPO

log = logging.getLogger(__name__)

STOP_TIMEOUT = 10.0
CLIENT_INFO = m.Implementation(name="acpwire-bench", version="0.1.0")


class BenchClient(Client):
    """Counts updates and ended tool calls and collects streamed text per session; allows
    every permission."""

    def __init__(self, agent: AgentPeer) -> None:
        self.agent = agent
        self.updates: dict[str, int] = defaultdict(int)
        self.chunks: dict[str, list[str]] = defaultdict(list)
        self.chars: dict[str, int] = defaultdict(int)
        self.tools_ended: dict[str, int] = defaultdict(int)
        """Tool calls that reached ``completed`` (or ``failed``: counted under "!"+id)."""
        self._waits: dict[str, tuple[int, anyio.Event]] = {}

    async def session_update(self, params: m.SessionNotification) -> None:
        session = params.session_id
        self.updates[session] += 1
        update = params.update
        if isinstance(update, m.SessionUpdateToolCallUpdate) and update.status in (
            "completed",
            "failed",
        ):
            self.tools_ended[session if update.status == "completed" else "!" + session] += 1
        if isinstance(update, m.SessionUpdateAgentMessageChunk) and isinstance(
            update.content, m.ContentBlockText
        ):
            self.chunks[session].append(update.content.text)
            self.chars[session] += len(update.content.text)
            wait = self._waits.get(session)
            if wait is not None and self.chars[session] >= wait[0]:
                wait[1].set()

    async def session_request_permission(
        self, params: m.RequestPermissionRequest
    ) -> m.RequestPermissionResponse:
        allow = next((o for o in params.options if o.kind in ("allow_once", "allow_always")), None)
        if allow is None:
            return m.RequestPermissionResponse(outcome=m.RequestPermissionOutcomeCancelled())
        return m.RequestPermissionResponse(
            outcome=m.RequestPermissionOutcomeSelected(option_id=allow.option_id)
        )

    def text(self, session: str) -> str:
        return "".join(self.chunks[session])

    def forget(self, session: str) -> None:
        for table in (self.updates, self.chunks, self.chars):
            table.pop(session, None)

    async def wait_for_chars(self, session: str, count: int) -> None:
        """Return once ``session`` has streamed at least ``count`` characters of text."""
        if self.chars[session] >= count:
            return
        event = anyio.Event()
        self._waits[session] = (count, event)
        try:
            await event.wait()
        finally:
            self._waits.pop(session, None)


@dataclass(frozen=True)
class Launch:
    """How to start an agent: command line and full environment."""

    argv: list[str]
    env: dict[str, str]


@dataclass
class Spawned:
    """A running agent process and our connection to it."""

    connection: ClientConnection[BenchClient]
    process: Process
    started: float
    """``time.perf_counter()`` just before the process was spawned."""

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the agent process has used so far; 0.0 if unknown."""
        return process_cpu(self.process.pid)

    def peak_rss_mb(self) -> float:
        """The agent process's peak resident memory so far, MiB; 0.0 if unknown."""
        return peak_rss_mb(self.process.pid)

    @property
    def peer(self) -> AgentPeer:
        return self.connection.peer

    @property
    def client(self) -> BenchClient:
        return self.connection.handler

    async def initialize(self) -> m.InitializeResponse:
        return await self.peer.initialize(
            m.InitializeRequest(
                protocol_version=1,
                client_capabilities=m.ClientCapabilities(),
                client_info=CLIENT_INFO,
            )
        )

    async def new_session(self, cwd: Path) -> str:
        answer = await self.peer.session_new(m.NewSessionRequest(cwd=str(cwd), mcp_servers=[]))
        return answer.session_id

    async def prompt(self, session: str, text: str) -> m.PromptResponse:
        return await self.peer.session_prompt(
            m.PromptRequest(session_id=session, prompt=[m.ContentBlockText(text=text)])
        )


@asynccontextmanager
async def spawn(
    argv: Sequence[str], *, env: Mapping[str, str], log_path: Path, cwd: Path = REPO
) -> AsyncIterator[Spawned]:
    """Start ``argv`` with piped stdio, connect, and stop it (stdin closed, then killed)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as stderr:
        started = time.perf_counter()
        process = await anyio.open_process(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=dict(env),
            cwd=cwd,
        )
        assert process.stdout is not None and process.stdin is not None
        connection = ClientConnection(BenchClient, process.stdout, process.stdin)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(connection.serve)
                try:
                    yield Spawned(connection, process, started)
                finally:
                    with anyio.CancelScope(shield=True):
                        await connection.close()
                        await _stop(process, argv[0])
                    tg.cancel_scope.cancel()
        finally:
            if process.returncode is None:
                process.kill()


async def _stop(process: Process, name: str) -> None:
    with anyio.move_on_after(STOP_TIMEOUT):
        await process.wait()
        return
    log.warning("%s (pid %d) did not exit after stdin closed; killing it", name, process.pid)
    process.kill()
    with anyio.move_on_after(STOP_TIMEOUT):
        await process.wait()


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (Linux ``/proc``); 0.0 elsewhere."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


def peak_rss_mb(pid: int) -> float:
    """Peak resident set size (``VmHWM``) of process ``pid`` in MiB (Linux ``/proc``);
    0.0 elsewhere."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def child_env(extra: Mapping[str, str]) -> dict[str, str]:
    """The bench's environment for a child, without settings that would leak in from the
    caller's shell and change what is measured."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ACPWIRE_", "HERMES_", "OPENAI_", "PYTHON"))
    }
    env.update(extra)
    return env
