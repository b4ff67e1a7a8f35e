"""The end-to-end rig: ``python -m acpwire`` with ``ACPWIRE_AGENT=hermes`` from a Python that
has hermes-agent 0.19.0 installed, driven over its stdio by a recording ACP client, against
the benchmark's loopback model server (which reports a 131072-token context window, as
Hermes refuses models under 64K, and answers Hermes' non-streamed auxiliary calls).

The Python is ``$ACPWIRE_HERMES_PYTHON`` or ``bench/.venvs/hermes-acpwire/bin/python``; see
``docs/HERMES.md`` for how to create that virtualenv.
"""

from __future__ import annotations

import os
import subprocess
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from acp_v1 import models as m
from acp_v1.interfaces import Client
from acp_v1.peers import AgentPeer
from acpwire.link import ClientConnection
from bench.model_server import AUX_REPLY, BenchModelServer

REPO = Path(__file__).resolve().parents[2]
VENV_PYTHON = REPO / "bench" / ".venvs" / "hermes-acpwire" / "bin" / "python"
U = TypeVar("U")
Chunk = (
    m.SessionUpdateAgentMessageChunk
    | m.SessionUpdateAgentThoughtChunk
    | m.SessionUpdateUserMessageChunk
)
DEAD_PROXY = "http://127.0.0.1:9"
MODEL = "bench-model"
STEP_S = 90.0
"""The most one request of an end-to-end test may take."""


def hermes_python() -> tuple[str | None, str]:
    """(the Python to run, "") or (None, why the end-to-end tests cannot run)."""
    configured = os.environ.get("ACPWIRE_HERMES_PYTHON")
    python = configured or str(VENV_PYTHON)
    if not Path(python).exists():
        return None, (
            f"no Python with hermes-agent: {python} is missing (create the venv as docs/HERMES.md"
            " says, or point ACPWIRE_HERMES_PYTHON at a Python with hermes-agent and acpwire)"
        )
    probe = (
        "import run_agent, acpwire, acpwire.hermes.modules as h;"
        " print(h.available(), acpwire.__file__)"
    )
    try:
        done = subprocess.run(
            [python, "-c", probe], capture_output=True, text=True, timeout=120, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{python} does not run: {exc}"
    words = done.stdout.split()
    if done.returncode != 0 or not words or words[0] != "True":
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:]
        return None, f"{python} cannot import run_agent and acpwire.hermes: {tail}"
    if not Path(words[1]).resolve().is_relative_to(REPO):
        return None, f"{python} imports acpwire from {words[1]}, not from this checkout"
    return python, ""


@contextmanager
def model_server(
    rules: Iterable[Mapping[str, Any]], aux_text: str = AUX_REPLY
) -> Iterator[BenchModelServer]:
    """The loopback model server playing ``rules`` (``aux_text``: its answer to Hermes'
    auxiliary calls), running for the block."""
    server = BenchModelServer(rules=rules, model=MODEL, aux_text=aux_text)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def rig_dirs(tmp_path: Path) -> dict[str, Path]:
    """Fresh homes for Hermes and acpwire, the session's ``work`` directory and the
    process's ``launch`` directory (a different one, so relative paths show)."""
    paths = {name: tmp_path / name for name in ("hermes", "acpwire", "work", "launch")}
    for path in paths.values():
        path.mkdir()
    return paths


def tool_call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    """One tool call of a scripted model reply."""
    return {"id": call_id, "name": name, "arguments": args}


def hermes_env(
    hermes_home: Path, acpwire_home: Path, base_url: str | None, *, config: str = ""
) -> dict[str, str]:
    """The child's environment; ``base_url`` None leaves Hermes without a provider.
    ``config``: more of Hermes' ``config.yaml`` (YAML text)."""
    hermes_home.mkdir(parents=True, exist_ok=True)
    if base_url is not None:
        (hermes_home / "config.yaml").write_text(
            f"model:\n  provider: custom\n  base_url: {base_url}\n  default: {MODEL}\n"
            f"  api_key: sk-test-local\n{config}",
            encoding="utf-8",
        )
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ACPWIRE_", "HERMES_", "OPENAI_", "PYTHON"))
    }
    env.update(
        ACPWIRE_AGENT="hermes",
        ACPWIRE_HOME=str(acpwire_home),
        ACPWIRE_LOG_LEVEL="WARNING",
        HERMES_HOME=str(hermes_home),
        HERMES_DISABLE_LAZY_INSTALLS="1",  # no pip installs from inside a test
        # Internet look-ups (model metadata, a scanner download) fail at once; the
        # loopback model server is exempt.
        HTTP_PROXY=DEAD_PROXY,
        HTTPS_PROXY=DEAD_PROXY,
        http_proxy=DEAD_PROXY,
        https_proxy=DEAD_PROXY,
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
    )
    return env


class Editor(Client):
    """Records every update per session; answers permissions by the request's title."""

    def __init__(self, agent: AgentPeer) -> None:
        self.agent = agent
        self.updates: dict[str, list[m.SessionNotification]] = defaultdict(list)
        self.permissions: list[m.RequestPermissionRequest] = []
        self.answers: dict[str, str] = {}
        """Substring of the request title -> option id; anything else is allowed once."""
        self._changed = anyio.Event()

    async def session_update(self, params: m.SessionNotification) -> None:
        self.updates[params.session_id].append(params)
        self._changed.set()
        self._changed = anyio.Event()

    async def session_request_permission(
        self, params: m.RequestPermissionRequest
    ) -> m.RequestPermissionResponse:
        self.permissions.append(params)
        title = params.tool_call.title or ""
        answer = next((o for k, o in self.answers.items() if k in title), "allow_once")
        return m.RequestPermissionResponse(
            outcome=m.RequestPermissionOutcomeSelected(option_id=answer)
        )

    def of(self, session: str, kind: type[U]) -> list[U]:
        """The session's updates of one kind, in order."""
        return [n.update for n in self.updates[session] if isinstance(n.update, kind)]

    def text(self, session: str, kind: type[Chunk] = m.SessionUpdateAgentMessageChunk) -> str:
        """The session's streamed text (agent messages, or ``kind`` chunks)."""
        return "".join(
            u.content.text
            for u in self.of(session, kind)
            if isinstance(u.content, m.ContentBlockText)
        )

    async def wait_until(self, condition: Callable[[], bool]) -> None:
        while not condition():
            await self._changed.wait()


class _Pipes:
    def __init__(self, receive: ByteReceiveStream | None, send: ByteSendStream | None) -> None:
        assert receive is not None and send is not None
        self.receive, self.send = receive, send


H = TypeVar("H", bound=Client)


@asynccontextmanager
async def connected(
    python: str,
    env: Mapping[str, str],
    handler: Callable[[AgentPeer], H],
    *,
    cwd: Path,
    log: Path,
    caps: m.ClientCapabilities | None = None,
    name: str = "hermes-e2e",
) -> AsyncIterator[ClientConnection[H]]:
    """A running ``python -m acpwire`` with ``handler`` as its client, initialized with
    ``caps``; stderr goes to ``log``; at the end, end of input and the exit awaited."""
    with log.open("ab") as stderr:
        process = await anyio.open_process(
            [python, "-m", "acpwire"], env=dict(env), cwd=str(cwd), stderr=stderr
        )
        async with process:
            pipes = _Pipes(process.stdout, process.stdin)
            link = ClientConnection(handler, pipes.receive, pipes.send)
            async with anyio.create_task_group() as tg:
                tg.start_soon(link.serve)
                with anyio.fail_after(STEP_S):
                    await link.peer.initialize(
                        m.InitializeRequest(
                            protocol_version=1,
                            client_info=m.Implementation(name=name, version="1"),
                            client_capabilities=caps or m.ClientCapabilities(),
                        )
                    )
                yield link
                await pipes.send.aclose()
                with anyio.fail_after(30):
                    await process.wait()
                tg.cancel_scope.cancel()


@asynccontextmanager
async def backend(
    python: str, env: Mapping[str, str], *, cwd: Path, log: Path
) -> AsyncIterator[ClientConnection[Editor]]:
    """A running ``python -m acpwire``, initialized, with the recording :class:`Editor`."""
    async with connected(python, env, Editor, cwd=cwd, log=log) as link:
        yield link


async def new_session(
    link: ClientConnection[Editor], cwd: Path | str, servers: Iterable[m.McpServer] = ()
) -> str:
    """``session/new`` in ``cwd`` (with these MCP servers); the new session's id."""
    with anyio.fail_after(STEP_S):
        made = await link.peer.session_new(
            m.NewSessionRequest(cwd=str(cwd), mcp_servers=list(servers))
        )
    return made.session_id


def tool_statuses(editor: Editor, session: str) -> dict[str, list[str]]:
    """Tool call id -> the statuses the editor saw it go through (start first)."""
    seen: dict[str, list[str]] = {}
    for n in editor.updates[session]:
        u = n.update
        if isinstance(u, m.SessionUpdateToolCall | m.SessionUpdateToolCallUpdate):
            seen.setdefault(u.tool_call_id, []).append(str(u.status))
    return seen


def text_prompt(session: str, text: str) -> m.PromptRequest:
    return m.PromptRequest(session_id=session, prompt=[m.ContentBlockText(text=text)])
