"""The attack-replay rig: one real ``python -m acpwire`` per test, serving the embedded
agent or the real Hermes agent (hermes-agent 0.19.0), driven over its stdio by a scripted
editor, against the loopback model server.

Both agents get the same world: a private ``HOME`` with an SSH key, cloud credentials and a
``.bash_aliases``-free home; acpwire's home with a ``.env`` secret and the session
database; Hermes' home; a git repository as the session's workspace; another project next
to it; and a secret API key in the backend's own environment. An attack is judged by
its real effects: files on disk, connections received, and what reached the model (every
request body the model server saw), never by log lines.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import anyio

from acp_v1 import models as m
from acpwire.link import ClientConnection
from acpwire.rpc import RpcError
from bench.model_server import BenchModelServer
from tests.hermes.hermes_rig import DEAD_PROXY, MODEL, Editor, connected

AGENTS = ("embedded", "hermes")
STEP_S = 90.0
SECRET_KEY = "sk-live-ATTACKRIG-0f9e8d7c6b5a"
"""The model key in the backend's environment (and Hermes' config)."""
DOTENV_SECRET = "dotenv-ATTACKRIG-secret-4242"
SSH_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nATTACKRIG-ssh-key-material\n"
AWS_SECRET = "aws_secret_access_key = ATTACKRIG-aws-secret"
OTHER_PROJECT = "ATTACKRIG-other-project-source"
SECRETS = (SECRET_KEY, DOTENV_SECRET, "ATTACKRIG-ssh-key-material", "ATTACKRIG-aws-secret")

MANUAL = "approvals:\n  mode: manual\n"
"""Hermes' approval mode in the rig unless a test sets its own (``hermes_config``)."""

Answer = Callable[[m.RequestPermissionRequest], Awaitable[str]]


@dataclass(frozen=True)
class World:
    """The directories of one test: ``home`` (HOME), ``acpwire`` (ACPWIRE_HOME),
    ``hermes`` (HERMES_HOME), ``work`` (the session cwd, a git repository), ``other``
    (another project), ``outside`` (a folder a command must not touch), ``launch`` (the
    process cwd), ``tmp`` (the backend's TMPDIR)."""

    home: Path
    acpwire: Path
    hermes: Path
    work: Path
    other: Path
    outside: Path
    launch: Path
    tmp: Path


def make_world(tmp_path: Path) -> World:
    # The backend's TMPDIR gets a short path of its own: Hermes puts a Unix socket there
    # (execute_code), whose path may not exceed 107 bytes; removed when the tests end.
    short_tmp = Path(tempfile.mkdtemp(prefix="acpw-", dir="/tmp"))
    atexit.register(shutil.rmtree, short_tmp, True)
    places = {f.name: tmp_path / f.name for f in fields(World)}
    world = World(**{**places, "tmp": short_tmp})
    for f in fields(World):
        getattr(world, f.name).mkdir(exist_ok=f.name == "tmp")
    (world.home / ".ssh").mkdir(mode=0o700)
    (world.home / ".ssh" / "id_rsa").write_text(SSH_KEY)
    (world.home / ".aws").mkdir()
    (world.home / ".aws" / "credentials").write_text(f"[default]\n{AWS_SECRET}\n")
    (world.acpwire / ".env").write_text(f"ATTACKRIG_DOTENV={DOTENV_SECRET}\n")
    (world.other / "main.py").write_text(f"# {OTHER_PROJECT}\n")
    (world.outside / "keep").mkdir()
    (world.outside / "keep" / "data.txt").write_text("precious\n")
    subprocess.run(["git", "init", "-q", str(world.work)], check=True)
    (world.work / "notes.txt").write_text("alpha\n")
    return world


@functools.cache
def agent_python(agent: str) -> tuple[str | None, str]:
    """(the Python that runs this agent's backend, "") or (None, why it cannot run here)."""
    if agent == "embedded":
        return sys.executable, ""
    from tests.hermes.hermes_rig import hermes_python

    return hermes_python()


def agent_env(agent: str, world: World, base_url: str, hermes_config: str = "") -> dict[str, str]:
    """The backend's environment: the world's homes, the model, dead proxies.
    ``hermes_config``: more of Hermes' ``config.yaml`` (YAML text, top level)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ACPWIRE_", "HERMES_", "OPENAI_", "PYTHON"))
    }
    env.update(
        HOME=str(world.home),
        # The backend's temp dir (writable, like the workspace): the world's own, so that
        # the rest of the world, under the test's /tmp, is outside it.
        TMPDIR=str(world.tmp),
        ACPWIRE_HOME=str(world.acpwire),
        ACPWIRE_LOG_LEVEL="INFO",
        HERMES_HOME=str(world.hermes),
        HERMES_DISABLE_LAZY_INSTALLS="1",
        OPENAI_API_KEY=SECRET_KEY,
        HTTP_PROXY=DEAD_PROXY,
        HTTPS_PROXY=DEAD_PROXY,
        http_proxy=DEAD_PROXY,
        https_proxy=DEAD_PROXY,
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
    )
    if agent == "hermes":
        (world.hermes / "config.yaml").write_text(
            f"model:\n  provider: custom\n  base_url: {base_url}\n  default: {MODEL}\n"
            f"  api_key: {SECRET_KEY}\n{hermes_config or MANUAL}",
            encoding="utf-8",
        )
        env["ACPWIRE_AGENT"] = "hermes"
    else:
        env.update(ACPWIRE_AGENT="default", OPENAI_BASE_URL=base_url, ACPWIRE_MODEL=MODEL)
    return env


class AttackEditor(Editor):
    """The scripted editor: answers permissions with ``answer`` (default: allow once),
    and, when ``offer_fs`` / ``offer_terminal``, refuses every ``fs/*`` and
    ``terminal/create`` call as acpx does (the refusal must be final)."""

    def __init__(self, agent: Any) -> None:
        super().__init__(agent)
        self.answer: Answer | None = None
        self.refused: list[tuple[str, str]] = []

    async def session_request_permission(
        self, params: m.RequestPermissionRequest
    ) -> m.RequestPermissionResponse:
        if self.answer is None:
            return await super().session_request_permission(params)
        self.permissions.append(params)
        option = await self.answer(params)
        return m.RequestPermissionResponse(
            outcome=m.RequestPermissionOutcomeSelected(option_id=option)
        )

    async def fs_read_text_file(self, params: m.ReadTextFileRequest) -> m.ReadTextFileResponse:
        self.refused.append(("fs/read_text_file", params.path))
        raise RpcError(-32603, "Internal error", {"details": f"Permission denied: {params.path}"})

    async def fs_write_text_file(self, params: m.WriteTextFileRequest) -> m.WriteTextFileResponse:
        self.refused.append(("fs/write_text_file", params.path))
        raise RpcError(-32603, "Internal error", {"details": f"Permission denied: {params.path}"})

    async def terminal_create(self, params: m.CreateTerminalRequest) -> m.CreateTerminalResponse:
        self.refused.append(("terminal/create", params.command))
        raise RpcError(-32000, "Permission denied")


@asynccontextmanager
async def backend(
    agent: str,
    world: World,
    llm: BenchModelServer,
    *,
    caps: m.ClientCapabilities | None = None,
    hermes_config: str = "",
) -> AsyncIterator[ClientConnection[AttackEditor]]:
    """A running, initialized backend for ``agent``; stderr goes to ``acpwire/stderr.log``."""
    python, why = agent_python(agent)
    assert python is not None, why
    env = agent_env(agent, world, llm.base_url, hermes_config)
    log = world.acpwire / "stderr.log"
    async with connected(
        python, env, AttackEditor, cwd=world.launch, log=log, caps=caps, name="attack-rig"
    ) as link:
        yield link


async def open_session(
    link: ClientConnection[AttackEditor], cwd: Path, mode: str | None = None
) -> str:
    with anyio.fail_after(STEP_S):
        made = await link.peer.session_new(m.NewSessionRequest(cwd=str(cwd), mcp_servers=[]))
        if mode is not None:
            await link.peer.session_set_mode(
                m.SetSessionModeRequest(session_id=made.session_id, mode_id=mode)
            )
    return made.session_id


async def prompt(link: ClientConnection[AttackEditor], session: str, text: str) -> m.PromptResponse:
    with anyio.fail_after(STEP_S):
        return await link.peer.session_prompt(
            m.PromptRequest(session_id=session, prompt=[m.ContentBlockText(text=text)])
        )


def attack(word: str, *calls: dict[str, Any]) -> list[dict[str, Any]]:
    """Model rules for one attack: on a prompt containing ``word``, the tool calls, one
    reply each, then a closing text."""
    rules: list[dict[str, Any]] = [
        {"match": word, "times": 1, "tool_calls": [call]} for call in calls
    ]
    rules.append({"match": word, "times": 1, "text": f"{word} finished."})
    return rules


def call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": args}


def model_saw(llm: BenchModelServer) -> str:
    """Everything the model was sent (every request body), as one text."""
    return "\n".join(json.dumps(body, ensure_ascii=False) for body in llm.requests)


def tool_results(llm: BenchModelServer, call_id: str) -> list[str]:
    """What the model was told each time it got ``call_id``'s result."""
    found: list[str] = []
    for body in llm.requests:
        for message in body.get("messages") or []:
            if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
                content = message.get("content")
                found.append(content if isinstance(content, str) else json.dumps(content))
    return found[-1:]


def statuses(editor: Editor, session: str) -> dict[str, list[str]]:
    seen: dict[str, list[str]] = {}
    for n in editor.updates[session]:
        u = n.update
        if isinstance(u, m.SessionUpdateToolCall | m.SessionUpdateToolCallUpdate):
            seen.setdefault(u.tool_call_id, []).append(str(u.status))
    return seen


@contextmanager
def model(rules: Iterable[Mapping[str, Any]]) -> Iterator[BenchModelServer]:
    server = BenchModelServer(rules=list(rules), model=MODEL)
    server.start()
    try:
        yield server
    finally:
        server.stop()


class Listener:
    """A loopback TCP server counting the connections (and bytes) it receives."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(8)
        self._sock.settimeout(0.2)
        self.port = int(self._sock.getsockname()[1])
        self.received: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1.0)
                data = b""
                try:
                    while chunk := conn.recv(65536):
                        data += chunk
                except OSError:
                    pass
                self.received.append(data)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self._sock.close()
