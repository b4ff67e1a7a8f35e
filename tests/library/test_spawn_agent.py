"""``spawn_agent``: a client connected to a real agent process; its stderr logged as it
comes (a chatty agent never blocks), the process ended and reaped on exit or error."""

from __future__ import annotations

import logging
import os
import signal
import sys
from pathlib import Path

import anyio
import pytest

from acp_v1 import models as m
from acp_v1.interfaces import Client
from acp_v1.peers import AgentPeer
from acpwire import ConnectionClosedError, HandlerError, spawn_agent

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

STEP_S = 30.0
"""A deadlock guard for one exchange with a child (start-up included), not a speed check."""
INIT = m.InitializeRequest(protocol_version=1)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Quiet(Client):
    def __init__(self, agent: AgentPeer) -> None:
        self.agent = agent
        self.updates: list[m.SessionNotification] = []

    async def session_update(self, params: m.SessionNotification) -> None:
        self.updates.append(params)


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "ACPWIRE_HOME": str(tmp_path / "home"),
        "ACPWIRE_LOG_LEVEL": "DEBUG",
        **extra,
    }


async def test_the_real_acpwire_answers_and_its_stderr_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="acpwire.agent_stderr")
    command = [sys.executable, "-m", "acpwire"]
    with anyio.fail_after(STEP_S):
        async with spawn_agent(Quiet, command, env=_env(tmp_path)) as agent:
            answer = await agent.peer.initialize(INIT)
            listed = await agent.peer.session_list(m.ListSessionsRequest())
    assert answer.agent_info is not None and answer.agent_info.name == "acpwire"
    assert listed.sessions == []
    assert agent.process.returncode == 0  # it exited by itself at the end of its input
    lines = [r.getMessage() for r in caplog.records if r.name == "acpwire.agent_stderr"]
    assert any("acpwire serving ACP on stdio" in line for line in lines)
    label = f"{Path(sys.executable).name}[{agent.process.pid}]: "
    assert lines and all(line.startswith(label) for line in lines)


CHATTY = """
import sys
sys.stderr.write(("x" * 1023 + "\\n") * 2048)  # 2 MiB: far more than a pipe holds
sys.stderr.flush()
from acpwire.cli import main
raise SystemExit(main([]))
"""


async def test_an_agent_writing_megabytes_to_stderr_never_blocks(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="acpwire.agent_stderr")
    with anyio.fail_after(STEP_S):
        async with spawn_agent(Quiet, [sys.executable, "-c", CHATTY], env=_env(tmp_path)) as agent:
            answer = await agent.peer.initialize(INIT)
    assert answer.protocol_version == 1
    xs = [r for r in caplog.records if r.getMessage().endswith("x" * 1023)]
    assert len(xs) == 2048


STUBBORN = """
import signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
sys.stderr.write("ignoring SIGTERM\\n"); sys.stderr.flush()
while True:
    time.sleep(1)
"""


async def test_an_agent_ignoring_its_end_of_input_and_sigterm_is_killed(tmp_path: Path) -> None:
    with anyio.fail_after(STEP_S):
        async with spawn_agent(
            Quiet, [sys.executable, "-c", STUBBORN], env=_env(tmp_path), grace_s=0.5
        ) as agent:
            pid = agent.process.pid
    assert agent.process.returncode == -signal.SIGKILL
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # reaped: no zombie left under this pid


async def test_an_error_in_the_block_comes_out_as_itself_and_the_agent_is_reaped(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(STEP_S), pytest.raises(KeyError, match="mine"):
        async with spawn_agent(
            Quiet, [sys.executable, "-m", "acpwire"], env=_env(tmp_path)
        ) as agent:
            await agent.peer.initialize(INIT)
            raise KeyError("mine")
    assert agent.process.returncode is not None


class NotAClient(Client):
    """A client handler with a misspelt method: binding it fails (did you mean ...?)."""

    def __init__(self, agent: AgentPeer) -> None:
        self.agent = agent

    async def session_updat(self, params: m.SessionNotification) -> None:
        pass


async def test_a_handler_that_does_not_fit_leaves_no_child_behind(tmp_path: Path) -> None:
    """The handler is bound after the child started; when binding fails, the child is
    ended and reaped before the error comes out (it was left running, never reaped)."""
    pid_file = tmp_path / "pid"
    code = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(30)"
    with anyio.fail_after(STEP_S), pytest.raises(HandlerError):
        async with spawn_agent(
            NotAClient,
            [sys.executable, "-c", code],
            env=_env(tmp_path),
            grace_s=0.5,
        ):
            pass
    with anyio.fail_after(STEP_S):
        while not pid_file.exists() or not pid_file.read_text():
            await anyio.sleep(0.05)
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)  # ended and reaped: no such process


async def test_an_agent_that_dies_fails_the_pending_request(tmp_path: Path) -> None:
    code = "import sys; sys.stdin.readline(); sys.exit(3)"
    with anyio.fail_after(STEP_S):
        async with spawn_agent(Quiet, [sys.executable, "-c", code], env=_env(tmp_path)) as agent:
            with pytest.raises(ConnectionClosedError):
                await agent.peer.initialize(INIT)
    assert agent.process.returncode == 3


def test_a_command_line_string_is_refused() -> None:
    async def enter() -> None:
        async with spawn_agent(Quiet, "acpwire --agent x"):
            pass

    with pytest.raises(TypeError, match="argv sequence"):
        anyio.run(enter)
