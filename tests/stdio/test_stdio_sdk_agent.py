"""acpwire's own client connection drives an agent built on the official SDK, over real pipes.

The agent (``sdk_agent.py``) runs as a child process; acpwire's typed
:class:`~acpwire.link.ClientConnection` talks to it through the child's stdin/stdout.
"""

from __future__ import annotations

import sys
from pathlib import Path
from subprocess import PIPE

import anyio
import pytest

from acp_v1 import models as m
from acp_v1.interfaces import Client
from acp_v1.peers import AgentPeer
from acpwire.link import ClientConnection
from acpwire.rpc import RpcError
from tests.stdio.stdio_support import EXIT_TIMEOUT, STEP_TIMEOUT

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

AGENT = Path(__file__).with_name("sdk_agent.py")


class Editor(Client):
    def __init__(self, agent: AgentPeer) -> None:
        self.agent = agent
        self.updates: list[m.SessionNotification] = []
        self.reads: list[str] = []

    async def session_update(self, params: m.SessionNotification) -> None:
        self.updates.append(params)

    async def fs_read_text_file(self, params: m.ReadTextFileRequest) -> m.ReadTextFileResponse:
        self.reads.append(params.path)
        return m.ReadTextFileResponse(content=Path(params.path).read_text(encoding="utf-8"))


def chunk(session_id: str, text: str) -> m.SessionNotification:
    return m.SessionNotification(
        session_id=session_id,
        update=m.SessionUpdateAgentMessageChunk(content=m.ContentBlockText(text=text)),
    )


async def test_acpwire_client_drives_an_sdk_agent(tmp_path: Path) -> None:
    note = tmp_path / "note.txt"
    note.write_text("read through the editor", encoding="utf-8")
    stderr_path = tmp_path / "agent-stderr.log"
    with stderr_path.open("ab") as stderr:
        process = await anyio.open_process(
            [sys.executable, str(AGENT)], stdin=PIPE, stdout=PIPE, stderr=stderr
        )
    async with process:
        assert process.stdout is not None and process.stdin is not None
        # Every call is sent, advertised or not: how the SDK agent answers is the test.
        client = ClientConnection(Editor, process.stdout, process.stdin, check_capabilities=False)
        editor = client.handler
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.serve)
            with anyio.fail_after(STEP_TIMEOUT):
                init = await client.peer.initialize(
                    m.InitializeRequest(
                        protocol_version=1,
                        client_capabilities=m.ClientCapabilities(
                            fs=m.FileSystemCapabilities(read_text_file=True)
                        ),
                        client_info=m.Implementation(name="acpwire-test", version="1"),
                    )
                )
                assert isinstance(init, m.InitializeResponse)
                assert init.protocol_version == 1
                assert init.agent_info is not None and init.agent_info.name == "sdk-echo-agent"

                new = await client.peer.session_new(
                    m.NewSessionRequest(cwd=str(tmp_path), mcp_servers=[])
                )
                sid = new.session_id
                assert sid == "sdk-session-1"

                result = await client.peer.session_prompt(
                    m.PromptRequest(session_id=sid, prompt=[m.ContentBlockText(text="hello")])
                )
                assert result.stop_reason == "end_turn"
                # Both chunks, typed, in order, before the prompt's answer.
                assert editor.updates == [chunk(sid, "echo: "), chunk(sid, "hello")]

                # The agent calls back into acpwire's client over the same pipes.
                result = await client.peer.session_prompt(
                    m.PromptRequest(
                        session_id=sid, prompt=[m.ContentBlockText(text=f"read {note}")]
                    )
                )
                assert result.stop_reason == "end_turn"
                assert editor.reads == [str(note)]
                assert editor.updates[2:] == [
                    chunk(sid, "file: "),
                    chunk(sid, "read through the editor"),
                ]

                # A method the SDK agent does not implement: a JSON-RPC error, not null.
                with pytest.raises(RpcError) as info:
                    await client.peer.session_list(m.ListSessionsRequest())
                assert info.value.code == -32601

            await client.close()  # end of input: the SDK agent must exit by itself
            with anyio.fail_after(EXIT_TIMEOUT):
                assert await process.wait() == 0
            tg.cancel_scope.cancel()
    assert "Traceback" not in stderr_path.read_text(encoding="utf-8")
