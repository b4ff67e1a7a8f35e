"""One session store with Hermes: ``$HERMES_HOME/state.db`` holds the sessions acpwire
serves with Hermes, and acpwire takes over the sessions ``hermes-acp`` made.

End to end against hermes-agent 0.19.0 (skipped without it, see ``hermes_rig``):
``python -m acpwire`` over its stdio, sessions written by hermes-acp's own
``SessionManager``, and ``state.db`` read back through Hermes' ``SessionDB``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_v1 import models as m
from bench.model_server import BenchModelServer
from tests.hermes.hermes_rig import (
    STEP_S,
    Editor,
    backend,
    hermes_env,
    model_server,
    new_session,
    rig_dirs,
    text_prompt,
    tool_statuses,
)
from tests.hermes.hermes_state_rig import HERMES_ACP_SESSION, hermes_run, messages, session_row

pytestmark = [pytest.mark.subprocess, pytest.mark.timeout(300)]

RULES: list[dict[str, Any]] = [
    {"match": "greet", "text": "Hi there, friend!"},
]

OLD_HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": "hello from hermes-acp"},
    {
        "role": "assistant",
        "content": "",
        "reasoning": "Let me look at the note.",
        "tool_calls": [
            {
                "id": "call_old",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "notes.txt"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_old", "content": "alpha"},
    {"role": "assistant", "content": "The note says alpha."},
]


@pytest.fixture
def llm() -> Iterator[BenchModelServer]:
    with model_server(RULES) as server:
        yield server


@pytest.mark.anyio
async def test_hermes_acp_sessions_are_taken_over_and_acpwire_sessions_reach_state_db(
    hermes_py: str, llm: BenchModelServer, tmp_path: Path
) -> None:
    dirs = rig_dirs(tmp_path)
    work, log = dirs["work"], tmp_path / "backend.log"
    env = hermes_env(dirs["hermes"], dirs["acpwire"], llm.base_url)
    old = hermes_run(
        hermes_py,
        env,
        HERMES_ACP_SESSION,
        {"cwd": str(work), "base_url": llm.base_url, "history": OLD_HISTORY},
    )
    elsewhere = hermes_run(
        hermes_py,
        env,
        HERMES_ACP_SESSION,
        {"cwd": str(dirs["launch"]), "base_url": llm.base_url, "history": OLD_HISTORY},
    )

    async with backend(hermes_py, env, cwd=dirs["launch"], log=log) as link:
        ed = link.handler
        with anyio.fail_after(STEP_S):
            listed = await link.peer.session_list(m.ListSessionsRequest(cwd=str(work)))
        assert [(s.session_id, s.title) for s in listed.sessions] == [
            (old, "hello from hermes-acp")
        ]
        assert elsewhere not in {s.session_id for s in listed.sessions}  # the cwd filter
        with anyio.fail_after(STEP_S):
            await link.peer.session_load(
                m.LoadSessionRequest(session_id=old, cwd=str(work), mcp_servers=[])
            )
        assert ed.text(old, m.SessionUpdateUserMessageChunk) == "hello from hermes-acp"
        assert ed.text(old, m.SessionUpdateAgentThoughtChunk) == "Let me look at the note."
        assert ed.text(old) == "The note says alpha."
        assert tool_statuses(ed, old) == {"call_old": ["in_progress", "completed"]}
        with anyio.fail_after(STEP_S):
            done = await link.peer.session_prompt(text_prompt(old, "greet the old session"))
        assert done.stop_reason == "end_turn"
        assert ed.text(old).endswith("Hi there, friend!")
        # The model saw the old conversation.
        sent = str(llm.requests[-1]["messages"])
        assert "hello from hermes-acp" in sent and "The note says alpha." in sent

        new = await new_session(link, work)
        with anyio.fail_after(STEP_S):
            await link.peer.session_prompt(text_prompt(new, "greet zebraquartz"))

    # Hermes appended the continued turn to the same session of its database.
    contents = [msg.get("content") for msg in messages(hermes_py, env, old)]
    assert contents[0] == "hello from hermes-acp"
    assert contents[-2:] == ["greet the old session", "Hi there, friend!"]
    # acpwire's session is an ACP session of state.db, with its cwd and provider facts,
    # and Hermes' full-text search (session_search's) finds it.
    row = session_row(hermes_py, env, new)
    assert row is not None and row["source"] == "acp"
    assert '"cwd": "' + str(work) + '"' in row["model_config"]
    assert '"provider": "custom"' in row["model_config"]
    found = hermes_run(
        hermes_py, env, "out = [r['session_id'] for r in db.search_messages('zebraquartz')]"
    )
    assert new in found

    # After a restart both are listed once, newest first; the taken-over one is not
    # adopted twice.
    async with backend(hermes_py, env, cwd=dirs["launch"], log=log) as link:
        with anyio.fail_after(STEP_S):
            listed = await link.peer.session_list(m.ListSessionsRequest(cwd=str(work)))
        assert [s.session_id for s in listed.sessions] == [new, old]


def _todo(call_id: str, job: str) -> dict[str, Any]:
    # Hermes re-injects the active todo list as the last user message after compressing:
    # naming the job there keeps the next rule matching.
    todos = [{"id": "1", "content": f"squeeze {job}", "status": "in_progress"}]
    return {"id": call_id, "name": "todo", "arguments": {"todos": todos}}


# The model reports a nearly full context window on the tool call's request, so Hermes
# compresses after running the tool (mid-turn), rotating its session (in_place: false).
COMPRESSING: list[dict[str, Any]] = [
    {"match": "greet", "text": "Hi there, friend!"},
    *(
        rule
        for n in (1, 2)
        for rule in (
            {"match": f"BIG{n}", "times": 1, "tool_calls": [_todo(f"call_big{n}", f"BIG{n}")],
             "usage": {"prompt_tokens": 125000, "completion_tokens": 5}},
            {"match": f"BIG{n}", "times": 1, "text": f"Squeezed {n}."},
        )
    ),
]  # fmt: skip


def _provenance(meta: dict[str, Any] | None) -> dict[str, Any]:
    found: dict[str, Any] = (meta or {}).get("hermes", {}).get("sessionProvenance", {})
    return found


def _rotations(editor: Editor, session: str) -> list[dict[str, Any]]:
    return [
        p
        for u in editor.of(session, m.SessionUpdateSessionInfoUpdate)
        if "reason" in (p := _provenance(u.meta))
    ]


@pytest.mark.anyio
async def test_compression_rotates_hermes_session_and_says_so_also_after_a_restart(
    hermes_py: str, tmp_path: Path
) -> None:
    dirs = rig_dirs(tmp_path)
    work, log = dirs["work"], tmp_path / "backend.log"
    with model_server(COMPRESSING) as llm:
        env = hermes_env(
            dirs["hermes"],
            dirs["acpwire"],
            llm.base_url,
            config="compression:\n  in_place: false\n",
        )
        async with backend(hermes_py, env, cwd=dirs["launch"], log=log) as link:
            ed = link.handler
            with anyio.fail_after(STEP_S):
                made = await link.peer.session_new(
                    m.NewSessionRequest(cwd=str(work), mcp_servers=[])
                )
            sid = made.session_id
            first = _provenance(made.meta)
            assert first["currentHermesSessionId"] == sid and first["compressionDepth"] == 0
            heads = [sid]
            for n in (1, 2):
                with anyio.fail_after(STEP_S * 2):
                    for k in range(4):
                        await link.peer.session_prompt(text_prompt(sid, f"greet {n}.{k}"))
                    done = await link.peer.session_prompt(text_prompt(sid, f"BIG{n} job"))
                assert done.stop_reason == "end_turn"
                assert ed.text(sid).endswith(f"Squeezed {n}.")
                rotation = _rotations(ed, sid)[-1]
                assert rotation["previousHermesSessionId"] == heads[-1]
                heads.append(rotation["currentHermesSessionId"])
                assert rotation == {
                    "acpSessionId": sid,
                    "currentHermesSessionId": heads[-1],
                    "rootHermesSessionId": sid,
                    "parentHermesSessionId": heads[-2],
                    "sessionKind": "continuation",
                    "compressionDepth": n,
                    "previousHermesSessionId": heads[-2],
                    "reason": "compression",
                    "creatorKind": "compression",
                }
            assert len(set(heads)) == 3 and len(_rotations(ed, sid)) == 2

        # Hermes' own rows: the chain, and the archived turns are all still there.
        parents = [(session_row(hermes_py, env, h) or {}).get("parent_session_id") for h in heads]
        assert parents == [None, heads[0], heads[1]]
        ends = [(session_row(hermes_py, env, h) or {}).get("end_reason") for h in heads]
        # (Hermes ends the head as "agent_close" when acpwire closes its agent at exit.)
        assert ends[:2] == ["compression", "compression"] and ends[2] != "compression"
        kept = [msg.get("content") for msg in messages(hermes_py, env, sid, inactive=True)]
        assert "greet 1.0" in kept and "BIG1 job" in kept

        async with backend(hermes_py, env, cwd=dirs["launch"], log=log) as link:
            ed = link.handler
            with anyio.fail_after(STEP_S):
                loaded = await link.peer.session_load(
                    m.LoadSessionRequest(session_id=sid, cwd=str(work), mcp_servers=[])
                )
            assert _provenance(loaded.meta) == {
                "acpSessionId": sid,
                "currentHermesSessionId": heads[2],
                "rootHermesSessionId": sid,
                "parentHermesSessionId": heads[1],
                "sessionKind": "continuation",
                "compressionDepth": 2,
            }
            # The replay marks Hermes' summaries as Hermes does; real turns stay unmarked.
            chunks = [
                *ed.of(sid, m.SessionUpdateUserMessageChunk),
                *ed.of(sid, m.SessionUpdateAgentMessageChunk),
            ]
            marked = [c for c in chunks if c.meta]
            assert marked and all(
                (c.meta or {})["hermes"].get("compactionSummary")
                or (c.meta or {})["hermes"].get("containsCompactionSummary")
                for c in marked
            )
            assert any(
                isinstance(c.content, m.ContentBlockText) and c.content.text == "greet 1.0"
                for c in chunks
                if not c.meta
            )
            with anyio.fail_after(STEP_S):
                done = await link.peer.session_prompt(text_prompt(sid, "greet after restart"))
            assert done.stop_reason == "end_turn"
            assert _rotations(ed, sid) == []
        # The continued turn went to the current head of the chain.
        tail = [msg.get("content") for msg in messages(hermes_py, env, heads[2])]
        assert tail[-2:] == ["greet after restart", "Hi there, friend!"]


CLI_WRITER = """
import time
db.create_session(session_id="cli-beside", source="cli", model="m")
for n in range(arg):
    db.append_message(session_id="cli-beside", role="user", content=f"cli {n}")
out = db.message_count("cli-beside")
"""
"""The Hermes CLI beside acpwire: another process appending to the same state.db."""


@pytest.mark.anyio
async def test_two_backends_and_a_hermes_writer_on_one_state_db_lose_nothing(
    hermes_py: str, llm: BenchModelServer, tmp_path: Path
) -> None:
    dirs = rig_dirs(tmp_path)
    work, log = dirs["work"], tmp_path / "backend.log"
    env = hermes_env(dirs["hermes"], dirs["acpwire"], llm.base_url)
    other_env = {**env, "ACPWIRE_HOME": str(tmp_path / "acpwire2")}
    turns = 4
    sessions: list[str] = []

    async def drive(environment: dict[str, str]) -> None:
        async with backend(hermes_py, environment, cwd=dirs["launch"], log=log) as link:
            ids = [await new_session(link, work) for _ in range(2)]
            sessions.extend(ids)

            async def converse(sid: str) -> None:
                for n in range(turns):
                    with anyio.fail_after(STEP_S):
                        await link.peer.session_prompt(text_prompt(sid, f"greet {sid} {n}"))

            async with anyio.create_task_group() as tg:
                for sid in ids:
                    tg.start_soon(converse, sid)

    async def cli_writer() -> int:
        count: int = await anyio.to_thread.run_sync(
            lambda: hermes_run(hermes_py, env, CLI_WRITER, 300)
        )
        return count

    written: list[int] = []

    async def cli() -> None:
        written.append(await cli_writer())

    async with anyio.create_task_group() as tg:
        tg.start_soon(drive, env)
        tg.start_soon(drive, other_env)
        tg.start_soon(cli)

    assert written == [300]
    assert len(set(sessions)) == 4
    for sid in sessions:
        stored = [msg.get("content") for msg in messages(hermes_py, env, sid)]
        expected = [t for n in range(turns) for t in (f"greet {sid} {n}", "Hi there, friend!")]
        assert stored == expected, sid
