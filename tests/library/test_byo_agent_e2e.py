"""Done-when of issue 12: a sync agent of about 30 lines, written from docs/LIBRARY.md alone
in a package outside the repository, served by ``acpwire --agent pkg.mod:factory`` over
real stdio: a new session, a streamed turn with a tool call and an edit approval, a
cancel, a restart with ``session/load`` replaying the session, and ``session/list``."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from acp_v1 import models as m
from acpwire import spawn_agent
from tests.library.editor import STEP_S, Editor, backend_env, prompt

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

AGENT = '''
import json, time
from pathlib import Path
from acpwire import BaseAgent, EditProposal, SessionContext, ToolEnd, ToolStart

class Scribe(BaseAgent):
    """Writes the prompt to out.txt once the user approves the diff; "wait" waits."""

    def run_turn(self, content, history, *, cwd, hooks):
        text = content if isinstance(content, str) else str(content)
        if text == "wait":
            hooks.on_text_delta("waiting")
            while not self.interrupted:
                time.sleep(0.01)
            return self.reply(content, history, "waiting")
        path = str(Path(cwd) / "out.txt")
        args = {"path": path, "content": text}
        hooks.on_text_delta("Writing ")
        hooks.on_tool_start(ToolStart("w1", "write_file", args))
        ok = hooks.approve_edits("w1", [EditProposal(path, None, text)])
        if ok:
            Path(path).write_text(text)
        result = "written" if ok else "denied"
        hooks.on_tool_end(ToolEnd("w1", "write_file", args, result, failed=not ok))
        hooks.on_text_delta("done.")
        call = {"id": "w1", "type": "function",
                "function": {"name": "write_file", "arguments": json.dumps(args)}}
        extra = [{"role": "assistant", "content": None, "tool_calls": [call]},
                 {"role": "tool", "tool_call_id": "w1", "content": result}]
        return self.reply(content, history, "Writing done.", extra=extra)

def factory(context: SessionContext) -> Scribe:
    return Scribe(context)
'''


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _package(tmp_path: Path) -> Path:
    root = tmp_path / "outside"
    (root / "byo").mkdir(parents=True)
    (root / "byo" / "__init__.py").write_text("")
    (root / "byo" / "scribe.py").write_text(AGENT)
    return root


async def test_a_thirty_line_agent_runs_in_the_full_backend(tmp_path: Path) -> None:
    assert len(AGENT.strip().splitlines()) <= 35
    work = tmp_path / "work"
    work.mkdir()
    env = backend_env(tmp_path / "home", PYTHONPATH=str(_package(tmp_path)))
    command = [sys.executable, "-m", "acpwire", "--agent", "byo.scribe:factory"]
    init = m.InitializeRequest(protocol_version=1)
    new = m.NewSessionRequest(cwd=str(work), mcp_servers=[])
    with anyio.fail_after(STEP_S * 3):
        async with spawn_agent(Editor, command, env=env) as first:
            peer, editor = first.peer, first.handler
            await peer.initialize(init)
            made = await peer.session_new(new)
            sid = made.session_id
            # Hermes' _meta belongs to the agents that produce it, not to this one.
            assert made.meta is None
            done = await peer.session_prompt(prompt(sid, "hello"))
            assert done.stop_reason == "end_turn"
            assert (work / "out.txt").read_text() == "hello"
            [asked] = editor.permissions
            diff = [
                c for c in asked.tool_call.content or [] if isinstance(c, m.ToolCallContentDiff)
            ]
            assert diff[0].new_text == "hello" and diff[0].path == str(work / "out.txt")
            kinds = editor.kinds(sid)
            assert kinds.index("tool_call") < kinds.index("tool_call_update")
            assert editor.text(sid) == "Writing done."
            infos = [
                u for _, u in editor.updates if isinstance(u, m.SessionUpdateSessionInfoUpdate)
            ]
            assert infos and all(u.meta is None for u in infos)  # the title, without _meta
            starts = [u for s, u in editor.updates if isinstance(u, m.SessionUpdateToolCall)]
            assert starts[0].tool_call_id == "w1" and starts[0].kind == "edit"

            answers: list[m.PromptResponse] = []

            async def wait() -> None:
                answers.append(await peer.session_prompt(prompt(sid, "wait")))

            async with anyio.create_task_group() as tg:
                tg.start_soon(wait)
                await editor.wait_text(sid, "waiting")
                await peer.session_cancel(m.CancelNotification(session_id=sid))
            assert answers[0].stop_reason == "cancelled"
        assert first.process.returncode == 0

        async with spawn_agent(Editor, command, env=env) as second:
            peer, editor = second.peer, second.handler
            await peer.initialize(init)
            listed = await peer.session_list(m.ListSessionsRequest())
            assert [s.session_id for s in listed.sessions] == [sid]
            assert listed.sessions[0].title == "hello"
            loaded = await peer.session_load(
                m.LoadSessionRequest(session_id=sid, cwd=str(work), mcp_servers=[])
            )
            assert loaded.meta is None
            replayed = [u for s, u in editor.updates if s == sid]
    assert second.process.returncode == 0
    users = [u for u in replayed if isinstance(u, m.SessionUpdateUserMessageChunk)]
    assert [u.content.text for u in users if isinstance(u.content, m.ContentBlockText)][:2] == [
        "hello",
        "wait",
    ]
    calls = [u for u in replayed if isinstance(u, m.SessionUpdateToolCall)]
    assert [c.tool_call_id for c in calls] == ["w1"] and calls[0].kind == "edit"
    assert "Writing done." in editor.text(sid)
