"""``make demo`` / ``acpwire demo`` / ``--demo``: a whole editor conversation, offline, printed as it happens.

Starts the loopback model server with a scripted conversation, launches the real backend
(``python -m acpwire``) as a subprocess over real stdio with a throwaway config home, and
plays the editor: initialize, a new session, a prompt whose answer streams text, makes a
plan and edits a file after a permission request (answered "allow once"), then restarts
the backend and reloads the session, which replays the conversation.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from acp_v1 import models as m
from acp_v1.interfaces import Client
from acp_v1.peers import AgentPeer
from acpwire.config.private import make_private_home, write_private
from acpwire.devtools.fake_llm import FakeLLM
from acpwire.link.connections import ClientConnection

__all__ = ["SCRIPT", "DemoEditor", "run", "run_demo"]

SCRIPT: list[dict[str, Any]] = [
    {
        "reasoning": "The user wants a greeting script. Plan it, then write it.",
        "text": "Sure, let me plan this first.",
        "tool_calls": [
            {
                "id": "call_plan",
                "name": "todo",
                "arguments": {
                    "todos": [
                        {"id": "1", "content": "Write hello.py", "status": "in_progress"},
                        {"id": "2", "content": "Explain how to run it", "status": "pending"},
                    ]
                },
            }
        ],
    },
    {
        "tool_calls": [
            {
                "id": "call_write",
                "name": "write_file",
                "arguments": {"path": "hello.py", "content": 'print("Hello from acpwire!")\n'},
            }
        ],
    },
    {"text": "Done: `hello.py` prints a greeting. Run it with `python hello.py`.", "chunks": 6},
]


def say(text: str) -> None:
    print(text, flush=True)


class DemoEditor(Client):
    """An editor that prints what it is shown and allows every permission once."""

    def __init__(self, agent: AgentPeer) -> None:
        self.agent = agent
        self.quiet = False
        self.count = 0

    async def session_update(self, params: m.SessionNotification) -> None:
        self.count += 1
        if self.quiet:
            return
        update = params.update
        kind = update.session_update
        if isinstance(update, m.SessionUpdateAgentMessageChunk | m.SessionUpdateAgentThoughtChunk):
            label = "agent" if kind == "agent_message_chunk" else "thought"
            text = (
                update.content.text
                if isinstance(update.content, m.ContentBlockText)
                else "[content]"
            )
            say(f"  [{label}] {text}")
        elif isinstance(update, m.SessionUpdateToolCall):
            say(f"  [tool call] {update.title} ({update.kind}, {update.status})")
        elif isinstance(update, m.SessionUpdateToolCallUpdate):
            say(f"  [tool update] {update.tool_call_id}: {update.status}")
        elif isinstance(update, m.SessionUpdatePlan):
            for entry in update.entries:
                say(f"  [plan] {entry.status:<11} {entry.content}")
        elif isinstance(update, m.SessionUpdateUserMessageChunk):
            text = (
                update.content.text
                if isinstance(update.content, m.ContentBlockText)
                else "[content]"
            )
            say(f"  [user] {text}")
        else:
            say(f"  [{kind}]")

    async def session_request_permission(
        self, params: m.RequestPermissionRequest
    ) -> m.RequestPermissionResponse:
        say(f"  [permission] {params.tool_call.title}")
        for item in params.tool_call.content or []:
            if isinstance(item, m.ToolCallContentDiff):
                say(f"    diff {item.path}: {len(item.new_text)} new characters")
        say(f"    options: {', '.join(o.option_id for o in params.options)} -> allow_once")
        return m.RequestPermissionResponse(
            outcome=m.RequestPermissionOutcomeSelected(option_id="allow_once")
        )


class _ProcessStreams:
    def __init__(self, process: Process) -> None:
        assert process.stdout is not None and process.stdin is not None
        self.receive: ByteReceiveStream = process.stdout
        self.send: ByteSendStream = process.stdin


@asynccontextmanager
async def backend(home: Path) -> AsyncIterator[ClientConnection[DemoEditor]]:
    env = {**os.environ, "ACPWIRE_HOME": str(home), "ACPWIRE_LOG_LEVEL": "WARNING"}
    async with await anyio.open_process(
        [sys.executable, "-m", "acpwire"], env=env, stderr=sys.stderr
    ) as process:
        streams = _ProcessStreams(process)
        link = ClientConnection(DemoEditor, streams.receive, streams.send)
        async with anyio.create_task_group() as tg:
            tg.start_soon(link.serve)
            await link.peer.initialize(
                m.InitializeRequest(
                    protocol_version=1,
                    client_info=m.Implementation(name="acpwire-demo", version="1"),
                    client_capabilities=m.ClientCapabilities(),
                )
            )
            yield link
            await streams.send.aclose()  # end of input: the backend finishes and exits
            with anyio.move_on_after(10):
                await process.wait()
            tg.cancel_scope.cancel()


async def conversation(base_url: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home, work = Path(tmp) / "home", Path(tmp) / "project"
        make_private_home(home)  # as the backend keeps it (it would warn otherwise)
        work.mkdir()
        write_private(
            home / "config.toml", f'[model]\nbase_url = "{base_url}"\nmodel = "demo-model"\n'
        )
        say(f"== editor starts the backend (python -m acpwire), project {work}")
        async with backend(home) as editor:
            new = await editor.peer.session_new(m.NewSessionRequest(cwd=str(work), mcp_servers=[]))
            say(f"== session/new -> {new.session_id}")
            prompt = "Write a hello world script, please."
            say(f"== session/prompt: {prompt!r}")
            done = await editor.peer.session_prompt(
                m.PromptRequest(session_id=new.session_id, prompt=[m.ContentBlockText(text=prompt)])
            )
            say(f"== prompt answered: stopReason={done.stop_reason}")
            say(f"== hello.py on disk: {(work / 'hello.py').read_text().strip()!r}")
        say("== the editor restarts the backend and reloads the session")
        async with backend(home) as editor:
            editor.handler.quiet = True
            await editor.peer.session_load(
                m.LoadSessionRequest(session_id=new.session_id, cwd=str(work), mcp_servers=[])
            )
            say(f"== session/load replayed {editor.handler.count} updates before answering")
            listed = await editor.peer.session_list(m.ListSessionsRequest())
            for info in listed.sessions:
                say(f"== session/list: {info.session_id} {info.title!r}")


def run(args: argparse.Namespace) -> int:
    from acpwire.cli._start import backend_installed

    return run_demo() if backend_installed() else 2


def run_demo() -> int:
    with FakeLLM(script=SCRIPT, model="demo-model") as llm:
        anyio.run(conversation, llm.base_url)
    say(json.dumps({"demo": "ok"}))
    return 0


if __name__ == "__main__":
    raise SystemExit(run_demo())
