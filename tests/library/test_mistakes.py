"""The mistake table of issue 28, its acceptance test: ten mistakes a user makes writing a
first agent or client on acpwire, each made for real (``python -m acpwire --agent ...``
or an agent on the bindings as a child process over stdio, acpwire's own client on the
other end), each asserting the exact first message the user sees: the answer their
client gets, the line the agent writes on stderr, or the exception their own code gets.

| # | mistake | the user sees |
|---|---|---|
| 1 | the agent raises in ``run_turn`` | -32603 ``Internal error: KeyError: 'x'``, data ``{"exception", "message"}``; the traceback on stderr from their own frame |
| 2 | ``run_turn`` returns None | -32603 ``TypeError: ....run_turn returned None, expected a TurnResult: ...`` |
| 3 | ``run_turn`` returns a wrong type | the same, naming the type |
| 4 | a bad factory for ``--agent`` | one line on stderr, exit 2; unannotated: -32603 at ``session/new`` |
| 5 | a permission answer with an id not offered | the client's own ValueError, logged; the agent refuses |
| 6 | a forgotten ``await`` in a client handler | ``... returned the coroutine ...: did you forget await?`` |
| 7 | a sync function where async is expected | ``HandlerError``: ``... is not async: write async def ...``; an async ``run_turn``: exit 2 |
| 8 | a misspelt handler name | ``HandlerError`` / exit 2 with "did you mean ...?" |
| 9 | a call the peer did not advertise | ``CapabilityError`` in the agent (``fs/*``) or the client (``session/load``), before anything is sent |
| 10 | the client refuses a call | the agent's tool fails with the client's own words |
"""

from __future__ import annotations

import gc
import logging
import re
import subprocess
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from acp_v1 import models as m
from acpwire import (
    CapabilityError,
    ConnectionClosedError,
    HandlerError,
    RpcError,
    invalid_params,
    spawn_agent,
)
from tests.library.editor import STEP_S, Editor, backend_env, prompt

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

AGENTS = '''
import os
from pathlib import Path

from acpwire import BaseAgent, EditorRefused, EditProposal, SessionContext, ToolEnd, ToolStart


class Raiser(BaseAgent):
    def run_turn(self, content, history, *, cwd, hooks):
        if content == "secret":
            raise RuntimeError(f"login refused for {os.environ['SERVICE_API_KEY']}")
        notes = {}
        return notes["x"]


class Forgetful(BaseAgent):
    def run_turn(self, content, history, *, cwd, hooks):
        hooks.on_text_delta("done")


class Stringly(BaseAgent):
    def run_turn(self, content, history, *, cwd, hooks):
        return "done"


class Plain:
    def run(self, text):
        return text


class Typo(BaseAgent):
    def run_trun(self, content, history, *, cwd, hooks):
        return self.reply(content, history, "done")


class Editing(BaseAgent):
    """Asks to write notes.txt, then writes it through the editor."""

    def run_turn(self, content, history, *, cwd, hooks):
        path = str(Path(cwd) / "notes.txt")
        args = {"path": path, "content": "hello"}
        hooks.on_tool_start(ToolStart("w1", "write_file", args))
        if not hooks.approve_edits("w1", [EditProposal(path, None, "hello")]):
            hooks.on_tool_end(ToolEnd("w1", "write_file", args, "denied", failed=True))
            return self.reply(content, history, "not approved", streamed=False)
        try:
            written = hooks.write_text_file(path, "hello")
        except EditorRefused as exc:
            hooks.on_tool_end(ToolEnd("w1", "write_file", args, str(exc), failed=True))
            return self.reply(content, history, str(exc), streamed=False)
        if not written:
            Path(path).write_text("hello")
        hooks.on_tool_end(ToolEnd("w1", "write_file", args, "written"))
        return self.reply(content, history, "written", streamed=False)


def raiser(context: SessionContext) -> Raiser:
    return Raiser(context)


def forgetful(context):
    return Forgetful(context)


def stringly(context):
    return Stringly(context)


def editing(context):
    return Editing(context)


def unannotated(context):
    return object()


def annotated(context: SessionContext) -> object:
    return object()
'''

EAGER = """
from acpwire import BaseAgent


class Eager(BaseAgent):
    async def run_turn(self, content, history, *, cwd, hooks):
        return self.reply(content, history, "done")


def factory(context):
    return Eager(context)
"""

BINDINGS_AGENT = '''
import logging

import anyio
from acp_v1 import Agent, ClientPeer, models as m
from acpwire import AgentConnection, stdio_streams


class Reader(Agent):
    """Reads README.md through the client, whatever the client advertised."""

    def __init__(self, client: ClientPeer) -> None:
        self.client = client

    async def initialize(self, params: m.InitializeRequest) -> m.InitializeResponse:
        return m.InitializeResponse(protocol_version=1)

    async def session_new(self, params: m.NewSessionRequest) -> m.NewSessionResponse:
        return m.NewSessionResponse(session_id="s1")

    async def session_prompt(self, params: m.PromptRequest) -> m.PromptResponse:
        request = m.ReadTextFileRequest(session_id=params.session_id, path="/p/README.md")
        await self.client.fs_read_text_file(request)
        return m.PromptResponse(stop_reason="end_turn")


async def main() -> None:
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(name)s: %(message)s")
    async with stdio_streams() as (receive, send):
        await AgentConnection(Reader, receive, send).serve()


anyio.run(main)
'''

INIT = m.InitializeRequest(protocol_version=1)
FS = m.ClientCapabilities(fs=m.FileSystemCapabilities(read_text_file=True, write_text_file=True))
MASKED_KEY = "s3cr3t-for-the-service"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    folder = tmp_path / "pkg"
    folder.mkdir()
    (folder / "mistakes_agent.py").write_text(AGENTS)
    (folder / "eager_agent.py").write_text(EAGER)
    (folder / "bindings_agent.py").write_text(BINDINGS_AGENT)
    (tmp_path / "work").mkdir()
    return folder


def _env(agents: Path, **extra: str) -> dict[str, str]:
    home = agents.parent / "home"
    return backend_env(home, PYTHONPATH=str(agents), SERVICE_API_KEY=MASKED_KEY, **extra)


def _backend(spec: str) -> list[str]:
    return [sys.executable, "-m", "acpwire", "--agent", f"mistakes_agent:{spec}"]


def _work(agents: Path) -> str:
    return str(agents.parent / "work")


def _stderr_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The agent's stderr, line by line, as spawn_agent logged it (timestamps cut off)."""
    lines = []
    for record in caplog.records:
        if record.name == "acpwire.agent_stderr" and isinstance(record.args, tuple):
            line = str(record.args[1])
            lines.append(re.sub(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ", "", line))
    return lines


def _errors(lines: Sequence[str]) -> list[str]:
    return [line for line in lines if line.startswith("[ERROR]")]


def _own_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    """ERROR records of this process (the client side)."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.ERROR and r.name != "acpwire.agent_stderr"
    ]


async def _prompt_error(agents: Path, spec: str, text: str = "hi", **env: str) -> RpcError:
    async with spawn_agent(Editor, _backend(spec), env=_env(agents, **env)) as agent:
        await agent.peer.initialize(INIT)
        made = await agent.peer.session_new(m.NewSessionRequest(cwd=_work(agents), mcp_servers=[]))
        with pytest.raises(RpcError) as failed:
            await agent.peer.session_prompt(prompt(made.session_id, text))
    return failed.value


def _start_fails(agents: Path, spec: str, module: str = "mistakes_agent") -> tuple[int, str]:
    command = [sys.executable, "-m", "acpwire", "--agent", f"{module}:{spec}"]
    done = subprocess.run(
        command, env=_env(agents), input=b"", capture_output=True, timeout=STEP_S, check=False
    )
    assert done.stdout == b""  # stdout is the protocol's alone
    return done.returncode, done.stderr.decode()


# -- 1. the agent raises ------------------------------------------------------------------


async def test_1_an_exception_in_run_turn_is_named_to_the_editor_and_logged_once(
    agents: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="acpwire.agent_stderr")
    with anyio.fail_after(STEP_S):
        error = await _prompt_error(agents, "raiser")
    assert error.code == -32603
    assert error.message == "Internal error: KeyError: 'x'"
    assert error.data == {"exception": "KeyError", "message": "'x'"}
    lines = _stderr_lines(caplog)
    assert _errors(lines) == [
        "[ERROR] acpwire.rpc.errors: agent: request session/prompt failed: KeyError: 'x'"
    ]
    # The user's own traceback, from their own frame: no exception group, no runtime frames.
    start = lines.index(_errors(lines)[0])
    traceback = lines[start + 1 : start + 6]
    assert traceback[0] == "Traceback (most recent call last):"
    assert traceback[1].startswith('  File "') and "mistakes_agent.py" in traceback[1]
    assert traceback[1].endswith(", in run_turn")
    assert traceback[2] == '    return notes["x"]'
    assert "KeyError: 'x'" in traceback
    assert not any("ExceptionGroup" in line or "anyio" in line for line in lines)


async def test_1_the_message_is_masked_and_can_be_left_out(agents: Path) -> None:
    with anyio.fail_after(STEP_S):
        masked = await _prompt_error(agents, "raiser", "secret")
        hidden = await _prompt_error(agents, "raiser", ACPWIRE_ERROR_MESSAGES="0")
    assert masked.message == "Internal error: RuntimeError: login refused for ***"
    assert MASKED_KEY not in repr(masked.data)
    assert (hidden.message, hidden.data) == ("Internal error: KeyError", {"exception": "KeyError"})


# -- 2, 3. run_turn returns the wrong thing ---------------------------------------------


async def test_2_run_turn_returning_none_is_a_type_error_not_a_cancel(
    agents: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="acpwire.agent_stderr")
    with anyio.fail_after(STEP_S):
        error = await _prompt_error(agents, "forgetful")
    said = (
        "TypeError: Forgetful.run_turn returned None, expected a TurnResult: "
        "return self.reply(content, history, text)"
    )
    assert (error.code, error.message) == (-32603, f"Internal error: {said}")
    lines = _stderr_lines(caplog)
    [logged] = _errors(lines)
    assert logged == f"[ERROR] acpwire.rpc.errors: agent: request session/prompt failed: {said}"
    assert lines[lines.index(logged) + 1 :][:1] != ["Traceback (most recent call last):"]


async def test_3_run_turn_returning_a_wrong_type_names_it(agents: Path) -> None:
    with anyio.fail_after(STEP_S):
        error = await _prompt_error(agents, "stringly")
    assert error.data == {
        "exception": "TypeError",
        "message": "Stringly.run_turn returned str, expected a TurnResult: "
        "return self.reply(content, history, text)",
    }


# -- 4. a bad factory ---------------------------------------------------------------------


def test_4_a_bad_factory_is_refused_when_the_agent_loads(agents: Path) -> None:
    lacks = "it lacks run_turn and 12 more members of acpwire.SyncAgent"
    fix = "(subclass acpwire.BaseAgent and write run_turn)"
    assert _start_fails(agents, "annotated") == (
        2,
        f"acpwire: agent 'mistakes_agent:annotated': annotated returns object, not an agent: "
        f"{lacks} {fix}\n",
    )
    assert _start_fails(agents, "Plain") == (
        2,
        f"acpwire: agent 'mistakes_agent:Plain': Plain is not an agent: {lacks} {fix}\n",
    )


async def test_4_an_unannotated_factory_returning_no_agent_fails_session_new(
    agents: Path,
) -> None:
    with anyio.fail_after(STEP_S):
        async with spawn_agent(Editor, _backend("unannotated"), env=_env(agents)) as agent:
            await agent.peer.initialize(INIT)
            with pytest.raises(RpcError) as failed:
                await agent.peer.session_new(m.NewSessionRequest(cwd=_work(agents), mcp_servers=[]))
    assert failed.value.message == (
        "Internal error: TypeError: the agent factory unannotated() returned object, not an "
        "agent: it lacks run_turn and 12 more members of acpwire.SyncAgent (subclass "
        "acpwire.BaseAgent and write run_turn)"
    )


# -- 5, 6. a client answering a permission request wrongly --------------------------------


class Careless(Editor):
    """Answers "yes", which is no option the agent offered."""

    async def session_request_permission(
        self, params: m.RequestPermissionRequest
    ) -> m.RequestPermissionResponse:
        self.permissions.append(params)
        chosen = m.RequestPermissionOutcomeSelected(option_id="yes")
        return m.RequestPermissionResponse(outcome=chosen)


class Hasty(Editor):
    """Forgets to await its own coroutine."""

    async def ask_user(self, params: m.RequestPermissionRequest) -> m.RequestPermissionResponse:
        chosen = m.RequestPermissionOutcomeSelected(option_id=params.options[0].option_id)
        return m.RequestPermissionResponse(outcome=chosen)

    async def session_request_permission(
        self, params: m.RequestPermissionRequest
    ) -> m.RequestPermissionResponse:
        return self.ask_user(params)  # type: ignore[return-value]


async def _edit_turn(agents: Path, client: type[Editor]) -> tuple[str, Editor]:
    with anyio.fail_after(STEP_S):
        async with spawn_agent(client, _backend("editing"), env=_env(agents)) as agent:
            await agent.peer.initialize(INIT)
            made = await agent.peer.session_new(
                m.NewSessionRequest(cwd=_work(agents), mcp_servers=[])
            )
            done = await agent.peer.session_prompt(prompt(made.session_id, "note"))
            assert done.stop_reason == "end_turn"
            return agent.handler.text(made.session_id), agent.handler


async def test_5_a_permission_answer_with_an_id_not_offered_fails_in_the_client(
    agents: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="acpwire.rpc")
    text, editor = await _edit_turn(agents, Careless)
    [asked] = editor.permissions
    offered = ", ".join(option.option_id for option in asked.options)
    assert offered == "allow_once, allow_session, deny"
    assert _own_errors(caplog) == [
        "client: request session/request_permission failed: ValueError: "
        "Careless.session_request_permission chose option_id "
        f"'yes', which was not offered ({offered}): answer with the option_id of one of "
        "params.options"
    ]
    assert text == "not approved"  # the agent took the failed answer as a refusal
    assert not (agents.parent / "work" / "notes.txt").exists()


async def test_6_a_forgotten_await_says_so(agents: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="acpwire.rpc")
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        text, _ = await _edit_turn(agents, Hasty)
        gc.collect()
    # The error says it; no "coroutine ... was never awaited" on top of it.
    assert [str(w.message) for w in warned if "never awaited" in str(w.message)] == []
    assert _own_errors(caplog) == [
        "client: request session/request_permission failed: TypeError: "
        "Hasty.session_request_permission returned the coroutine "
        "Hasty.ask_user() instead of a RequestPermissionResponse: did you forget await?"
    ]
    assert text == "not approved"


# -- 7, 8. a handler that does not fit -----------------------------------------------------


class Sync(Editor):
    def session_request_permission(  # type: ignore[override]
        self, params: m.RequestPermissionRequest
    ) -> m.RequestPermissionResponse:
        return m.RequestPermissionResponse(outcome=m.RequestPermissionOutcomeCancelled())


class Misspelt(Editor):
    async def request_permision(
        self, params: m.RequestPermissionRequest
    ) -> m.RequestPermissionResponse:
        return m.RequestPermissionResponse(outcome=m.RequestPermissionOutcomeCancelled())


async def _bind_fails(agents: Path, client: type[Editor]) -> str:
    with anyio.fail_after(STEP_S), pytest.raises(HandlerError) as refused:
        async with spawn_agent(client, _backend("editing"), env=_env(agents)):
            raise AssertionError("bound")
    return str(refused.value)


async def test_7_a_sync_handler_where_async_is_expected_fails_when_bound(agents: Path) -> None:
    assert await _bind_fails(agents, Sync) == (
        "Sync bound as the client: session_request_permission is not async: "
        "write async def session_request_permission"
    )


def test_7_an_async_run_turn_fails_when_the_agent_loads(agents: Path) -> None:
    assert _start_fails(agents, "factory", module="eager_agent") == (
        2,
        "acpwire: agent 'eager_agent:factory': importing eager_agent failed: TypeError: "
        "Eager.run_turn is async: BaseAgent.run_turn is synchronous (it runs in a worker "
        "thread): write def run_turn and call blocking code\n",
    )


async def test_8_a_misspelt_client_handler_is_named_with_the_right_name(agents: Path) -> None:
    assert await _bind_fails(agents, Misspelt) == (
        "Misspelt bound as the client: request_permision is no ACP client method; "
        "did you mean session_request_permission?"
    )


def test_8_a_misspelt_run_turn_is_refused_when_the_agent_loads(agents: Path) -> None:
    assert _start_fails(agents, "Typo") == (
        2,
        "acpwire: agent 'mistakes_agent:Typo': Typo is not an agent: it defines run_trun, "
        "not run_turn: did you mean run_turn?\n",
    )


# -- 9. a call the peer did not advertise ------------------------------------------------


class Files(Editor):
    """Serves fs/read_text_file, but its initialize does not say so."""

    async def fs_read_text_file(self, params: m.ReadTextFileRequest) -> m.ReadTextFileResponse:
        raise AssertionError("never called: the agent refuses the call itself")


async def test_9_a_call_the_client_did_not_advertise_fails_in_the_agent(
    agents: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="acpwire.agent_stderr")
    command = [sys.executable, str(agents / "bindings_agent.py")]
    said = (
        "CapabilityError: fs/read_text_file: the client's initialize did not advertise "
        "clientCapabilities.fs.readTextFile: check it before calling "
        "(ACP v1 file-system § Checking Support)"
    )
    with anyio.fail_after(STEP_S):
        async with spawn_agent(Files, command, env=_env(agents)) as agent:
            await agent.peer.initialize(INIT)  # no capabilities
            made = await agent.peer.session_new(m.NewSessionRequest(cwd="/p", mcp_servers=[]))
            with pytest.raises(RpcError) as failed:
                await agent.peer.session_prompt(prompt(made.session_id, "read"))
    assert failed.value.message == f"Internal error: {said}"
    lines = _stderr_lines(caplog)
    [logged] = _errors(lines)
    assert logged == f"[ERROR] acpwire.rpc.errors: agent: request session/prompt failed: {said}"
    frame = lines[lines.index(logged) + 2]
    assert "bindings_agent.py" in frame and frame.endswith("in session_prompt")


async def test_9_a_call_the_agent_did_not_advertise_fails_in_the_client(agents: Path) -> None:
    """The other way round: a client's session/load to an agent whose initialize answer
    has no loadSession is refused in the client, before anything is sent."""
    command = [sys.executable, str(agents / "bindings_agent.py")]
    with anyio.fail_after(STEP_S):
        async with spawn_agent(Files, command, env=_env(agents)) as agent:
            await agent.peer.initialize(INIT)
            with pytest.raises(CapabilityError) as refused:
                await agent.peer.session_load(
                    m.LoadSessionRequest(session_id="s1", cwd="/p", mcp_servers=[])
                )
    assert str(refused.value) == (
        "session/load: the agent's initialize did not advertise agentCapabilities.loadSession: "
        "check it before calling (ACP v1 session-setup § Loading Sessions)"
    )


# -- 10. the client refuses a call ----------------------------------------------------------


class ReadOnly(Editor):
    """Approves the edit, then refuses to write: the folder is read-only."""

    async def fs_write_text_file(self, params: m.WriteTextFileRequest) -> m.WriteTextFileResponse:
        raise invalid_params("the folder is read-only")


async def test_10_a_refused_write_fails_the_agents_tool_with_the_clients_words(
    agents: Path,
) -> None:
    path = agents.parent / "work" / "notes.txt"
    with anyio.fail_after(STEP_S):
        async with spawn_agent(ReadOnly, _backend("editing"), env=_env(agents)) as agent:
            await agent.peer.initialize(
                m.InitializeRequest(protocol_version=1, client_capabilities=FS)
            )
            made = await agent.peer.session_new(
                m.NewSessionRequest(cwd=_work(agents), mcp_servers=[])
            )
            done = await agent.peer.session_prompt(prompt(made.session_id, "note"))
            text = agent.handler.text(made.session_id)
    assert done.stop_reason == "end_turn"
    assert text == (
        f"The editor refused to write {path}: the folder is read-only. It was not done any "
        "other way. Do not retry it with another tool or a shell command; tell the user if "
        "it is needed."
    )
    assert not path.exists()


# -- beyond the ten: the agent a client spawns cannot start ---------------------------------


async def test_an_agent_that_cannot_start_says_why_in_the_clients_error(agents: Path) -> None:
    """The first run of a new client: the agent's module is not importable. The client's
    first call fails saying how the agent ended and what it said, not just "closed"."""
    command = [sys.executable, "-m", "acpwire", "--agent", "no_such_notes:factory"]
    with anyio.fail_after(STEP_S):
        async with spawn_agent(Files, command, env=_env(agents)) as agent:
            with pytest.raises(ConnectionClosedError) as closed:
                await agent.peer.initialize(INIT)
            with pytest.raises(ConnectionClosedError) as later:
                await agent.peer.initialize(INIT)
    said = (
        "Connection closed: the agent exited with code 2; its last line on stderr: acpwire: "
        "agent 'no_such_notes:factory': no module named 'no_such_notes' (it is imported as "
        "Python imports any module, never from the current folder: install its package, or "
        "put the folder holding it on PYTHONPATH)"
    )
    assert (closed.value.code, closed.value.message) == (-32603, said)
    assert later.value.message == said  # and every call after it


async def test_an_agent_that_closes_its_output_says_it_still_runs() -> None:
    script = "import os, sys, time; sys.stderr.write('bye\\n'); os.close(1); time.sleep(30)"
    with anyio.fail_after(STEP_S):
        async with spawn_agent(Files, [sys.executable, "-c", script], grace_s=0.2) as agent:
            with pytest.raises(ConnectionClosedError) as closed:
                await agent.peer.initialize(INIT)
    assert closed.value.message == (
        "Connection closed: the agent closed its stdout and is still running; its last line "
        "on stderr: bye"
    )
