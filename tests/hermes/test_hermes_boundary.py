"""Hermes' own tools behind acpwire's boundary (hermes-agent 0.19.0), end to end.

The attacks both agents must stop are in ``tests/security``; these are the decisions only
Hermes' toolset needs (docs/SECURITY.md, "When serving Hermes"): Hermes' command checks
only add to acpwire's (its danger patterns ask, its hardline list and the user's
``approvals.deny`` refuse, its ``approvals.mode: off`` removes nothing); ``execute_code``
is asked as code leaving the sandbox; ``memory`` is asked in Default and
``session_search`` in every mode but Full Access; a ``delegate_task`` child's calls meet
the same boundary as its parent's; MCP tool calls are asked; background commands and the
``process`` tool are not served. Judged by effects on disk and what reached the model.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from acp_v1 import models as m
from tests.backend.sandbox_rig import require_sandbox
from tests.mcp.support import echo_entry
from tests.security.attack_rig import (
    SSH_KEY,
    attack,
    backend,
    call,
    make_world,
    model,
    model_saw,
    open_session,
    prompt,
    statuses,
    tool_results,
)

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess, pytest.mark.timeout(240)]


@pytest.fixture(autouse=True)
def _hermes(hermes_py: str) -> None:
    """Skips these tests, saying why, where no Python with hermes-agent exists."""


async def deny(_request: m.RequestPermissionRequest) -> str:
    return "deny"


def titles(requests: list[m.RequestPermissionRequest]) -> list[str]:
    return [r.tool_call.title or "" for r in requests]


async def test_hermes_danger_patterns_add_an_ask_and_its_mode_off_removes_none(
    tmp_path: Path,
) -> None:
    """``chmod 777`` runs in the sandbox unasked for the embedded agent; Hermes flags it,
    so it is asked, also with Hermes' ``approvals.mode: off`` (which never asks)."""
    require_sandbox()
    world = make_world(tmp_path)
    notes = world.work / "notes.txt"
    notes.chmod(0o644)
    rules = attack("CHMOD", call("c_chmod", "terminal", command="chmod 777 notes.txt"))
    with model(rules) as llm:
        async with backend(
            "hermes", world, llm, hermes_config="approvals:\n  mode: 'off'\n"
        ) as link:
            link.handler.answer = deny
            sid = await open_session(link, world.work)
            await prompt(link, sid, "CHMOD the notes")
            asked = titles(link.handler.permissions)
            seen = statuses(link.handler, sid)
    assert any("Hermes flags it" in t and "chmod 777" in t for t in asked), asked
    assert stat.S_IMODE(notes.stat().st_mode) == 0o644
    assert seen["c_chmod"][-1] == "failed"


async def test_hermes_hardline_and_deny_rules_refuse_in_every_mode(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    rules = attack(
        "NEVER",
        call("c_hard", "terminal", command="echo mkfs > /dev/null; touch hardline-ran.txt"),
        call("c_deny", "terminal", command="touch denied-ran.txt"),
    )
    config = "approvals:\n  mode: manual\n  deny:\n    - 'touch denied*'\n"
    with model(rules) as llm:
        async with backend("hermes", world, llm, hermes_config=config) as link:
            sid = await open_session(link, world.work, "full_access")
            await prompt(link, sid, "NEVER run these")
    assert not (world.work / "hardline-ran.txt").exists()
    assert not (world.work / "denied-ran.txt").exists()
    assert "Hermes never runs this command" in tool_results(llm, "c_hard")[0]
    assert "approvals.deny" in tool_results(llm, "c_deny")[0]


async def test_execute_code_is_asked_as_code_leaving_the_sandbox(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    marker = world.work / "exec-ran.txt"
    code = f"open({str(marker)!r}, 'w').write('ran')\nprint('done')"
    with model(attack("EXEC", call("c_exec", "execute_code", code=code))) as llm:
        async with backend("hermes", world, llm) as link:
            link.handler.answer = deny
            sid = await open_session(link, world.work, "dont_ask")
            await prompt(link, sid, "EXEC some code")
            asked = link.handler.permissions
            seen = statuses(link.handler, sid)
    assert [r.tool_call.kind for r in asked] == ["execute"]
    assert "execute_code" in titles(asked)[0]
    assert not marker.exists()
    assert seen["c_exec"][-1] == "failed"


async def test_execute_codes_calls_back_into_hermes_meet_the_boundary(tmp_path: Path) -> None:
    """Allowed to run, the code's own tool calls (Hermes' ``hermes_tools`` stubs, over its
    RPC socket) are judged as the model's are: its read of the SSH key is asked, under
    the ``execute_code`` call, and denied; the key never reaches the model."""
    world = make_world(tmp_path)
    code = (
        "from hermes_tools import read_file\n"
        f"print(read_file(path={str(world.home / '.ssh' / 'id_rsa')!r}))"
    )

    async def allow_code_deny_reads(request: m.RequestPermissionRequest) -> str:
        return "deny" if request.tool_call.kind == "read" else "allow_once"

    with model(attack("NESTED", call("c_code", "execute_code", code=code))) as llm:
        async with backend("hermes", world, llm) as link:
            link.handler.answer = allow_code_deny_reads
            sid = await open_session(link, world.work)
            await prompt(link, sid, "NESTED reads")
            asked = link.handler.permissions
    kinds = [(r.tool_call.kind, r.tool_call.tool_call_id) for r in asked]
    assert kinds == [("execute", "c_code"), ("read", "c_code")], kinds
    assert SSH_KEY.splitlines()[1] not in model_saw(llm)


async def test_memory_is_asked_in_default_and_session_search_in_every_mode(
    tmp_path: Path,
) -> None:
    world = make_world(tmp_path)
    remember = call("c_mem", "memory", action="add", target="memory", content="ATTACKRIG-note")
    search = call("c_search", "session_search", query="ATTACKRIG")
    with model([*attack("REMEMBER", remember), *attack("RECALL", search)]) as llm:
        async with backend("hermes", world, llm) as link:
            link.handler.answer = deny
            sid = await open_session(link, world.work)
            await prompt(link, sid, "REMEMBER this")
            other = await open_session(link, world.work, "dont_ask")
            await prompt(link, other, "RECALL the others")
            asked = titles(link.handler.permissions)
            seen = {**statuses(link.handler, sid), **statuses(link.handler, other)}
    assert any("memory" in t and "HERMES_HOME" in t for t in asked), asked
    assert any("session_search" in t and "every workspace" in t for t in asked), asked
    assert seen["c_mem"][-1] == "failed" and seen["c_search"][-1] == "failed"
    memories = list((world.hermes).rglob("MEMORY.md"))
    assert all("ATTACKRIG-note" not in p.read_text() for p in memories)


async def test_a_delegated_childs_calls_meet_the_same_boundary(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    key = f"{world.home}/.ssh/id_rsa"
    rules = [
        *attack("CHILDREAD", call("c_child_read", "read_file", path=key)),
        *attack("DELEGATE", call("c_delegate", "delegate_task", goal="CHILDREAD the key")),
    ]
    with model(rules) as llm:
        async with backend("hermes", world, llm) as link:
            link.handler.answer = deny
            sid = await open_session(link, world.work)
            await prompt(link, sid, "DELEGATE the work")
            asked = link.handler.permissions
    reads = [r for r in asked if r.tool_call.kind == "read"]
    assert reads, titles(asked)
    assert ".ssh/id_rsa" in (reads[0].tool_call.title or "")
    assert reads[0].tool_call.tool_call_id == "c_delegate"  # asked under the parent's call
    assert SSH_KEY.splitlines()[1] not in model_saw(llm)


async def test_mcp_tool_calls_are_asked_in_default_mode(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    echo = call("c_echo", "echo__echo", text="ATTACKRIG-echo")
    with model(attack("ECHO", echo)) as llm:
        async with backend("hermes", world, llm) as link:
            link.handler.answer = deny
            made = await link.peer.session_new(
                m.NewSessionRequest(cwd=str(world.work), mcp_servers=[echo_entry()])
            )
            sid = made.session_id
            await prompt(link, sid, "ECHO it")
            asked = titles(link.handler.permissions)
            seen = statuses(link.handler, sid)
    assert any("Call MCP tool echo__echo" in t for t in asked), asked
    assert seen["c_echo"][-1] == "failed"
    assert "echo: ATTACKRIG-echo" not in "".join(tool_results(llm, "c_echo"))


async def test_background_commands_and_the_process_tool_are_not_served(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    background = call("c_bg", "terminal", command="sleep 30; touch bg-ran.txt", background=True)
    with model(attack("BACKGROUND", background)) as llm:
        async with backend("hermes", world, llm) as link:
            sid = await open_session(link, world.work, "full_access")
            await prompt(link, sid, "BACKGROUND job")
    offered = {t["function"]["name"] for t in llm.requests[0]["tools"]}
    assert "process" not in offered and {"terminal", "read_file", "execute_code"} <= offered
    terminal = next(t for t in llm.requests[0]["tools"] if t["function"]["name"] == "terminal")
    assert {"sandbox", "justification", "workdir"} <= set(
        terminal["function"]["parameters"]["properties"]
    )
    result = json.loads(tool_results(llm, "c_bg")[0])
    assert "background processes are not available" in result["error"]
