"""Quickstart client: spawn an ACP agent, prompt it, print what it streams.

    python examples/client.py                       # drives examples/echo_agent.py
    python examples/client.py acpwire --agent mypkg.agent:factory

What it shows: ``spawn_agent`` (the agent's stderr goes to logging, the process is ended
and reaped when the block ends), a client handler receiving ``session/update``s, an error
answer (``RpcError`` with its code), ``session/cancel``, and an extension method.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import anyio

from acp_v1 import AgentPeer, Client, models as m
from acpwire import RpcError, spawn_agent


class Printer(Client):
    """Prints the agent's streamed text; refuses everything else (-32601)."""

    def __init__(self, agent: AgentPeer) -> None:
        self.agent = agent
        self.text: list[str] = []

    async def session_update(self, params: m.SessionNotification) -> None:
        update = params.update
        if isinstance(update, m.SessionUpdateAgentMessageChunk) and isinstance(
            update.content, m.ContentBlockText
        ):
            self.text.append(update.content.text)
            print(update.content.text, end="", flush=True)


def prompt(session_id: str, text: str) -> m.PromptRequest:
    return m.PromptRequest(session_id=session_id, prompt=[m.ContentBlockText(text=text)])


async def main(command: list[str]) -> None:
    async with spawn_agent(Printer, command) as agent:
        peer = agent.peer
        hello = await peer.initialize(m.InitializeRequest(protocol_version=1))
        print(f"agent: {hello.agent_info.name if hello.agent_info else '?'}")
        session = await peer.session_new(m.NewSessionRequest(cwd=str(Path.cwd()), mcp_servers=[]))

        done = await peer.session_prompt(prompt(session.session_id, "hello from the client"))
        print(f"\nstop: {done.stop_reason}")

        try:
            await peer.session_prompt(prompt(session.session_id, " "))
        except RpcError as exc:
            print(f"refused: {exc.code} {exc.message}")

        async with anyio.create_task_group() as tg:
            answers: list[m.PromptResponse] = []

            async def long_prompt() -> None:
                long = " ".join(f"word{n}" for n in range(200))
                answers.append(await peer.session_prompt(prompt(session.session_id, long)))

            tg.start_soon(long_prompt)
            while not agent.handler.text[-1].startswith("word"):  # it started streaming
                await anyio.sleep(0.01)
            await peer.session_cancel(m.CancelNotification(session_id=session.session_id))
        print(f"\nstop: {answers[0].stop_reason}")

        # Extension methods go by their wire name, leading underscore included; with
        # result_type the answer is validated (InvalidResult if it does not match).
        answer = await agent.peer.ext_request("_echo/count", {}, result_type=dict[str, int])
        print(f"extension answer: {answer}")


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    here = Path(__file__).resolve().parent
    argv = sys.argv[1:] or [sys.executable, str(here / "echo_agent.py")]
    anyio.run(main, argv)
