"""An editor built on the official ACP SDK (``acp`` 0.12.1) that drives ``acpwire`` over stdio.

:class:`SdkEditor` implements the SDK's ``Client``: it records every ``session/update``
as the SDK's typed models, answers permission requests with the first ``allow_once``
option, and serves ``fs/*`` from the disk. :func:`spawn_acpwire` launches
``python -m acpwire`` through the SDK's own ``spawn_agent_process`` and also records the
raw incoming messages in wire order (an SDK stream observer), so tests can check what
arrived before a response.
"""

from __future__ import annotations

import asyncio.subprocess as aio_subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.exceptions import RequestError
from acp.interfaces import Agent, Client
from acp.schema import (
    AgentMessageChunk,
    AgentPlanContentUpdate,
    AgentPlanRemovedUpdate,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AllowedOutcome,
    AvailableCommandsUpdate,
    ClientCapabilities,
    ConfigOptionUpdate,
    CreateElicitationResponse,
    CreateTerminalResponse,
    CurrentModeUpdate,
    DeniedOutcome,
    ElicitationMode,
    EnvVariable,
    FileSystemCapabilities,
    Implementation,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    SessionInfoUpdate,
    TerminalOutputResponse,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
    UserMessageChunk,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from acp.stdio import spawn_agent_process

from tests.stdio.stdio_support import ACPWIRE, JsonObject, child_env

SessionUpdate = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | AgentPlanContentUpdate
    | AgentPlanRemovedUpdate
    | AvailableCommandsUpdate
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
    | UsageUpdate
)

U = TypeVar("U", bound=SessionUpdate)

EDITOR_CAPABILITIES = ClientCapabilities(
    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)
)
EDITOR_INFO = Implementation(name="sdk-editor", version="0.12.1")


class FsOnlyClient(Client):
    """The SDK ``Client`` methods this editor does not offer, each answering ``-32601``.

    Spelled out because a subclass of the SDK's Protocol that leaves a method out
    silently answers ``null`` instead of "method not found".
    """

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        raise RequestError.method_not_found("terminal/create")

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        raise RequestError.method_not_found("terminal/output")

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse | None:
        raise RequestError.method_not_found("terminal/release")

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        raise RequestError.method_not_found("terminal/wait_for_exit")

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> KillTerminalResponse | None:
        raise RequestError.method_not_found("terminal/kill")

    async def create_elicitation(
        self, message: str, mode: ElicitationMode, **kwargs: Any
    ) -> CreateElicitationResponse:
        raise RequestError.method_not_found("elicitation/create")

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        raise RequestError.method_not_found("elicitation/complete")

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def on_connect(self, conn: Agent) -> None:
        return None


@dataclass
class SdkEditor(FsOnlyClient):
    updates: dict[str, list[SessionUpdate]] = field(default_factory=dict)
    permissions: list[tuple[ToolCallUpdate, list[PermissionOption]]] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    writes: list[tuple[str, str]] = field(default_factory=list)

    async def session_update(self, session_id: str, update: SessionUpdate, **kwargs: Any) -> None:
        self.updates.setdefault(session_id, []).append(update)

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        self.permissions.append((tool_call, options))
        for option in options:
            if option.kind == "allow_once":
                return RequestPermissionResponse(
                    outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
                )
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        self.reads.append(path)
        try:
            return ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.writes.append((path, content))
        Path(path).write_text(content, encoding="utf-8")
        return WriteTextFileResponse()

    def of_type(self, session_id: str, kind: type[U]) -> list[U]:
        return [u for u in self.updates.get(session_id, []) if isinstance(u, kind)]

    def text(self, session_id: str, kind: type[SessionUpdate] = AgentMessageChunk) -> str:
        """The concatenated text of the session's chunks of ``kind``."""
        parts: list[str] = []
        for update in self.of_type(session_id, kind):
            content = getattr(update, "content", None)
            parts.append(str(getattr(content, "text", "")))
        return "".join(parts)


@dataclass
class WireLog:
    """Raw JSON-RPC messages as the SDK connection saw them, each direction in wire order."""

    incoming: list[JsonObject] = field(default_factory=list)
    outgoing: list[JsonObject] = field(default_factory=list)

    def __call__(self, event: StreamEvent) -> None:
        if event.direction is StreamDirection.INCOMING:
            self.incoming.append(event.message)
        else:
            self.outgoing.append(event.message)

    def response_index(self, method: str) -> int:
        """Position in :attr:`incoming` of the answer to the (last) ``method`` request sent."""
        sent = [m["id"] for m in self.outgoing if m.get("method") == method and "id" in m]
        assert sent, f"no {method} request was sent"
        for index, message in enumerate(self.incoming):
            if message.get("id") == sent[-1] and "method" not in message:
                return index
        raise AssertionError(f"no answer to {method} arrived")


@asynccontextmanager
async def spawn_acpwire(
    editor: SdkEditor, home: Path, stderr_path: Path, *args: str
) -> AsyncIterator[tuple[ClientSideConnection, aio_subprocess.Process, WireLog]]:
    """``python -m acpwire`` launched and connected by the SDK; stderr goes to a file."""
    wire = WireLog()
    with stderr_path.open("ab") as stderr:
        async with spawn_agent_process(
            editor,
            ACPWIRE[0],
            *ACPWIRE[1:],
            *args,
            env=child_env(home),
            cwd=home.parent,
            transport_kwargs={"stderr": stderr.fileno()},
            observers=[wire],
        ) as (connection, process):
            yield connection, process, wire
