"""A whole ACP client: what an editor does, from spawning the agent to its last error.

    python examples/editor_client.py                 # drives examples/notes_agent.py
    python examples/editor_client.py acpwire --agent notes_agent:factory   # the same agent

It works in a scratch folder with its own acpwire home, and shows: ``spawn_agent`` with
an environment extending ``os.environ``; ``initialize`` advertising the client's file
system; ``session/new``; prompts whose turns ask ``session/request_permission`` (answered
with an option the agent offered) and read and write the file through the client
(``fs/read_text_file``, ``fs/write_text_file``); ``session/cancel`` ending a running
prompt; the errors a client meets (an error answer, a closed connection) and the ones it
answers itself. docs/LIBRARY.md ("A whole client") walks through it.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from pathlib import Path

import anyio

from acp_v1 import AgentPeer, Client, models as m
from acpwire import ConnectionClosedError, RpcError, invalid_params, resource_not_found, spawn_agent


class NotesEditor(Client):
    """An editor for one project folder: shows the agent's text, asks the "user" (the
    ``allow`` flag) and serves the folder's files to the agent."""

    def __init__(self, agent: AgentPeer, root: Path) -> None:
        self.agent = agent  # calls to the agent; this example calls it through spawn_agent's peer
        self.root = root
        self.allow = True
        self.streamed: list[str] = []

    async def session_update(self, params: m.SessionNotification) -> None:
        update = params.update
        if isinstance(update, m.SessionUpdateAgentMessageChunk) and isinstance(
            update.content, m.ContentBlockText
        ):
            self.streamed.append(update.content.text)
        elif isinstance(update, m.SessionUpdateToolCall):
            print(f"  tool call: {update.title}")

    async def session_request_permission(
        self, params: m.RequestPermissionRequest
    ) -> m.RequestPermissionResponse:
        # Answer with the id of an option the agent offered; pick it by its kind.
        wanted = "allow_once" if self.allow else "reject_once"
        ids = [option.option_id for option in params.options]
        print(f"  asked: {params.tool_call.title} {ids}")
        for option in params.options:
            if option.kind == wanted:
                chosen = m.RequestPermissionOutcomeSelected(option_id=option.option_id)
                return m.RequestPermissionResponse(outcome=chosen)
        return m.RequestPermissionResponse(outcome=m.RequestPermissionOutcomeCancelled())

    def _inside(self, path: str) -> Path:
        resolved = Path(path).resolve()
        if not resolved.is_relative_to(self.root):
            raise invalid_params(f"{path} is outside the project")  # the agent gets -32602
        return resolved

    async def fs_read_text_file(self, params: m.ReadTextFileRequest) -> m.ReadTextFileResponse:
        path = self._inside(params.path)
        if not path.is_file():
            raise resource_not_found(params.path)  # -32002
        lines = path.read_text().splitlines(keepends=True)
        start = (params.line or 1) - 1  # line is 1-based; limit counts lines
        end = None if params.limit is None else start + params.limit
        print(f"  read: {path.name}")
        return m.ReadTextFileResponse(content="".join(lines[start:end]))

    async def fs_write_text_file(self, params: m.WriteTextFileRequest) -> m.WriteTextFileResponse:
        path = self._inside(params.path)
        path.write_text(params.content)
        print(f"  wrote: {path.name}")
        return m.WriteTextFileResponse()


def prompt(session_id: str, text: str) -> m.PromptRequest:
    return m.PromptRequest(session_id=session_id, prompt=[m.ContentBlockText(text=text)])


async def main(command: list[str], scratch: Path) -> None:
    root = (scratch / "project").resolve()
    root.mkdir()
    # env replaces the agent's environment: extend os.environ to keep PATH, HOME and the rest.
    env = {**os.environ, "ACPWIRE_HOME": str(scratch / "home")}

    async with spawn_agent(lambda peer: NotesEditor(peer, root), command, env=env) as agent:
        peer, editor = agent.peer, agent.handler
        capabilities = m.ClientCapabilities(
            fs=m.FileSystemCapabilities(read_text_file=True, write_text_file=True)
        )
        hello = await peer.initialize(
            m.InitializeRequest(
                protocol_version=1,
                client_capabilities=capabilities,
                client_info=m.Implementation(name="notes-editor", version="1.0"),
            )
        )
        name = hello.agent_info.name if hello.agent_info else "?"
        print(f"agent: {name}, protocol {hello.protocol_version}")
        session = await peer.session_new(m.NewSessionRequest(cwd=str(root), mcp_servers=[]))
        sid = session.session_id

        for text in ["note: buy milk", "note: call mum"]:
            print(f"> {text}")
            done = await peer.session_prompt(prompt(sid, text))
            print(f"  {''.join(editor.streamed)} ({done.stop_reason})")
            editor.streamed.clear()

        editor.allow = False  # the user says no: the agent writes nothing
        print("> note: sell the car")
        done = await peer.session_prompt(prompt(sid, "note: sell the car"))
        print(f"  {''.join(editor.streamed)} ({done.stop_reason})")
        editor.streamed.clear()

        # session/cancel is a notification: the running prompt then answers "cancelled".
        print("> count")
        async with anyio.create_task_group() as tg:
            answers: list[m.PromptResponse] = []

            async def count() -> None:
                answers.append(await peer.session_prompt(prompt(sid, "count")))

            tg.start_soon(count)
            while "3 " not in "".join(editor.streamed):  # let it stream a little first
                await anyio.sleep(0.01)
            await peer.session_cancel(m.CancelNotification(session_id=sid))
        counted = "".join(editor.streamed).split()
        print(f"  ...{' '.join(counted[-2:])} ({answers[0].stop_reason})")

        try:  # an error answer raises RpcError with the agent's code and message
            await peer.session_prompt(prompt("no-such-session", "hello"))
        except RpcError as exc:
            print(f"error: {exc.code} {exc.message}")

    # The block closed the connection and ended the agent; the peer now fails at once.
    try:
        await peer.session_new(m.NewSessionRequest(cwd=str(root), mcp_servers=[]))
    except ConnectionClosedError as exc:  # an RpcError whose code is -32603
        print(f"closed: {exc.code} {exc.message}")
    print(f"agent exit code: {agent.process.returncode}")
    print("NOTES.md:", " | ".join((root / "NOTES.md").read_text().splitlines()))


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    here = Path(__file__).resolve().parent
    argv = sys.argv[1:] or [sys.executable, str(here / "notes_agent.py")]
    with tempfile.TemporaryDirectory() as scratch:
        anyio.run(main, argv, Path(scratch))
