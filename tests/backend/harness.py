"""An in-memory editor for backend tests: a real ACP client over memory streams.

``EditorClient`` implements the client side of ACP with the generated interfaces: it
records every ``session/update`` per session, answers permission requests by a policy
the test sets, and serves ``fs/*`` from a dict of unsaved buffers over the disk.
``rig`` wires a loopback :class:`FakeLLM`, a real :class:`Runtime` (SQLite in the test's
home dir) and an initialized editor together; :class:`Rig` has the usual steps.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from acp_v1 import models as m
from acp_v1.interfaces import Client
from acp_v1.peers import AgentPeer
from acpwire.config import Settings
from acpwire.config.limits import ToolLimits
from acpwire.link import ClientConnection
from acpwire.rpc import memory_pair, resource_not_found
from acpwire.server.app import Runtime, serve
from acpwire.server.editor.mcp_host import LateStart, McpHost
from tests.backend.editor_terminals import TerminalHost
from tests.support.fake_llm import FakeLLM, Reply

FS_CAPS = m.ClientCapabilities(
    fs=m.FileSystemCapabilities(read_text_file=True, write_text_file=True)
)
NO_CAPS = m.ClientCapabilities()
TERMINAL_CAPS = m.ClientCapabilities(
    fs=m.FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
)
STEP_S = 15.0
"""Upper bound for one protocol step in a test (generous: CI machines are slow)."""


@dataclass
class PermissionPolicy:
    """How the editor answers ``session/request_permission``: an option id,
    ``"cancelled"``, or ``None`` to never answer (to test timeouts)."""

    answer: str | None = "allow_once"
    first: list[str] = field(default_factory=list)
    """Answers for the next requests, in order, before ``answer`` applies again."""
    requests: list[m.RequestPermissionRequest] = field(default_factory=list)
    hold: anyio.Event | None = None
    """When set, each request waits for this event before answering (``answer`` is read
    after the wait, so a test can decide the answer while the request is pending)."""


class EditorClient(TerminalHost, Client):
    def __init__(self, agent: AgentPeer) -> None:
        self.agent = agent
        self.terminals = {}
        self.updates: dict[str, list[Any]] = defaultdict(list)
        self.policy = PermissionPolicy()
        self.buffers: dict[str, str] = {}
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.events: list[tuple[str, str, Any]] = []
        """Updates and permission requests in arrival order: (kind, session id, payload)."""
        self.changed = anyio.Event()
        """Replaced after every update or permission request: wait on it to see progress."""

    def _poke(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def session_update(self, params: m.SessionNotification) -> None:
        self.updates[params.session_id].append(params.update)
        self.events.append((str(params.update.session_update), params.session_id, params.update))
        self._poke()

    async def session_request_permission(
        self, params: m.RequestPermissionRequest
    ) -> m.RequestPermissionResponse:
        self.policy.requests.append(params)
        self.events.append(("permission", params.session_id, params))
        self._poke()
        if self.policy.hold is not None:
            await self.policy.hold.wait()
        answer = self.policy.first.pop(0) if self.policy.first else self.policy.answer
        while answer is None:
            await anyio.sleep_forever()
        if answer == "cancelled":
            return m.RequestPermissionResponse(outcome=m.RequestPermissionOutcomeCancelled())
        return m.RequestPermissionResponse(
            outcome=m.RequestPermissionOutcomeSelected(option_id=answer)
        )

    async def fs_read_text_file(self, params: m.ReadTextFileRequest) -> m.ReadTextFileResponse:
        self.reads.append(params.path)
        if params.path in self.buffers:
            return m.ReadTextFileResponse(content=self.buffers[params.path])
        try:
            return m.ReadTextFileResponse(content=Path(params.path).read_text())
        except FileNotFoundError:
            raise resource_not_found(f"file {params.path}") from None

    async def fs_write_text_file(self, params: m.WriteTextFileRequest) -> m.WriteTextFileResponse:
        self.writes.append((params.path, params.content))
        Path(params.path).parent.mkdir(parents=True, exist_ok=True)  # as editors do
        Path(params.path).write_text(params.content)
        return m.WriteTextFileResponse()

    def kinds(self, session_id: str) -> list[str]:
        return [u.session_update for u in self.updates[session_id]]

    def of_kind(self, session_id: str, kind: str) -> list[Any]:
        return [u for u in self.updates[session_id] if u.session_update == kind]

    def text(self, session_id: str, kind: str = "agent_message_chunk") -> str:
        return "".join(
            u.content.text for u in self.of_kind(session_id, kind) if hasattr(u.content, "text")
        )

    async def wait_for(self, condition: Callable[[], bool], timeout: float = STEP_S) -> None:
        """Return once ``condition()`` holds, re-checking after every update."""
        with anyio.fail_after(timeout):
            while not condition():
                await self.changed.wait()


class NoMcp(McpHost):
    """Refuses every MCP server (for tests that do not exercise MCP)."""

    supports_http = False
    supports_sse = False

    async def start(
        self,
        state: Any,
        servers: list[m.McpServer],
        *,
        wait_s: float | None = None,
        on_late: LateStart | None = None,
    ) -> list[tuple[str, str]]:
        return [(getattr(s, "name", "?"), "MCP disabled in this test") for s in servers]

    async def stop(self, state: Any) -> None:
        return None

    async def shutdown(self) -> None:
        return None

    async def __aenter__(self) -> NoMcp:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None


def make_settings(
    home: Path,
    base_url: str | None,
    *,
    approval_timeout: float = 5.0,
    model: str | None = "fake-model",
    extra: Mapping[str, Any] | None = None,
    workers: int = 32,
    tools: ToolLimits | None = None,
    fields: Mapping[str, Any] | None = None,
) -> Settings:
    """Test settings; ``extra`` goes to config.toml's values, ``fields`` to the
    :class:`Settings` fields themselves (``sensitive_paths``, ``env_passthrough``...)."""
    values: dict[str, Any] = {"context_window": 32768}
    if model:
        values["model"] = model
    if base_url:
        values["base_url"] = base_url
    values.update(extra or {})
    return Settings(
        home=home,
        file_values=values,
        approval_timeout_s=approval_timeout,
        workers=workers,
        tools=tools or ToolLimits(),
        **(fields or {}),
    )


async def initialize(
    client: ClientConnection[EditorClient],
    *,
    caps: m.ClientCapabilities | None = FS_CAPS,
    protocol_version: int = 1,
    client_name: str = "test-editor",
) -> m.InitializeResponse:
    with anyio.fail_after(STEP_S):
        return await client.peer.initialize(
            m.InitializeRequest(
                protocol_version=protocol_version,
                client_capabilities=caps,
                client_info=m.Implementation(name=client_name, version="1.0"),
            )
        )


@asynccontextmanager
async def connected(
    runtime: Runtime,
    *,
    mcp: McpHost | None = None,
    caps: m.ClientCapabilities | None = FS_CAPS,
    unstable: bool = True,
    init: bool = True,
    editor: type[EditorClient] = EditorClient,
    client_name: str = "test-editor",
    real_mcp: bool = False,
    check_capabilities: bool = True,
) -> AsyncIterator[ClientConnection[EditorClient]]:
    """A connected editor (initialized unless ``init`` is False) talking to a backend
    over memory streams (``real_mcp``: with the MCP host the backend builds itself;
    ``check_capabilities=False``: calls the backend did not advertise are sent too)."""
    (a_recv, a_send), (c_recv, c_send) = memory_pair()
    client = ClientConnection(editor, c_recv, c_send, check_capabilities=check_capabilities)
    host = None if real_mcp else mcp or NoMcp()
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: serve(runtime, a_recv, a_send, mcp=host, unstable=unstable))
        tg.start_soon(client.serve)
        if init:
            await initialize(client, caps=caps, client_name=client_name)
        yield client
        tg.cancel_scope.cancel()


@dataclass
class Rig:
    """One editor connected to a backend over a loopback model."""

    llm: FakeLLM
    runtime: Runtime
    connection: ClientConnection[EditorClient]
    workspace: Path

    @property
    def editor(self) -> EditorClient:
        return self.connection.handler

    @property
    def peer(self) -> AgentPeer:
        return self.connection.peer

    async def new(self, cwd: Path | str | None = None) -> str:
        with anyio.fail_after(STEP_S):
            response = await self.peer.session_new(
                m.NewSessionRequest(cwd=str(cwd or self.workspace), mcp_servers=[])
            )
        return response.session_id

    async def prompt(self, session_id: str, text: str) -> m.PromptResponse:
        with anyio.fail_after(STEP_S):
            return await self.peer.session_prompt(
                m.PromptRequest(session_id=session_id, prompt=[m.ContentBlockText(text=text)])
            )

    async def cancel(self, session_id: str) -> None:
        with anyio.fail_after(STEP_S):
            await self.peer.session_cancel(m.CancelNotification(session_id=session_id))

    async def set_mode(self, session_id: str, mode: str) -> None:
        with anyio.fail_after(STEP_S):
            await self.peer.session_set_mode(
                m.SetSessionModeRequest(session_id=session_id, mode_id=mode)
            )


def workspace_of(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir(exist_ok=True)
    return path.resolve()


@asynccontextmanager
async def rig(
    tmp_path: Path,
    script: Iterable[Reply | Mapping[str, Any]] = (),
    *,
    rules: Iterable[Reply | Mapping[str, Any]] = (),
    caps: m.ClientCapabilities | None = FS_CAPS,
    approval_timeout: float = 5.0,
    extra: Mapping[str, Any] | None = None,
    unstable: bool = True,
    models: Iterable[str] | None = None,
    workers: int = 32,
    hold_models: bool = False,
    client_name: str = "test-editor",
    editor: type[EditorClient] = EditorClient,
    tools: ToolLimits | None = None,
    fields: Mapping[str, Any] | None = None,
    real_mcp: bool = False,
    check_capabilities: bool = True,
) -> AsyncIterator[Rig]:
    """A FakeLLM, a Runtime with its home in ``tmp_path/home`` and a connected editor
    (``editor``: a subclass answering differently).

    ``hold_models``: the model list is not served until ``rig.llm.models_open`` is set;
    ``fields``: :class:`Settings` fields; ``real_mcp``: the backend's own MCP host."""
    with FakeLLM(script, rules=rules, models=models) as llm:
        if hold_models:
            llm.models_open.clear()
        settings = make_settings(
            tmp_path / "home",
            llm.base_url,
            approval_timeout=approval_timeout,
            extra=extra,
            workers=workers,
            tools=tools,
            fields=fields,
        )
        runtime = Runtime.create(settings)
        try:
            async with connected(
                runtime,
                caps=caps,
                unstable=unstable,
                client_name=client_name,
                editor=editor,
                real_mcp=real_mcp,
                check_capabilities=check_capabilities,
            ) as connection:
                if not hold_models:
                    await models_listed(runtime)
                yield Rig(llm, runtime, connection, workspace_of(tmp_path))
        finally:
            runtime.close()


async def models_listed(runtime: Runtime) -> None:
    """Ask for the model list before the first session, so that every test sees the same
    session answers (full picker, no later ``config_option_update``)."""
    with anyio.fail_after(STEP_S):
        await anyio.to_thread.run_sync(runtime.factory.available_models)


def tool_call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    """A scripted model reply that asks for one tool call."""
    return {"tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}


def model_tool_result(r: Rig, call_id: str) -> str:
    """The result of tool call ``call_id`` as the model was last sent it."""
    for request in reversed(r.llm.requests):
        for message in request["messages"]:
            if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
                return str(message["content"])
    raise AssertionError(f"no tool result for {call_id}")


def tool_texts(content: list[Any] | None) -> str:
    """The text parts of a tool call's content, one per line."""
    return "\n".join(
        c.content.text
        for c in content or []
        if isinstance(c, m.ToolCallContentContent) and isinstance(c.content, m.ContentBlockText)
    )
