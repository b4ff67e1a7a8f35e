"""The boundary's rules that need no Hermes: what the model is offered, how Hermes'
``terminal`` arguments become acpwire's, and that a call tied to no turn never runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acpwire.hermes.boundary import (
    DECISIONS,
    NOT_SERVED,
    ROUTED,
    Boundary,
    _terminal_args,
    shape_toolset,
)


def _definition(name: str, **properties: Any) -> dict[str, Any]:
    params = {"type": "object", "properties": properties}
    return {"type": "function", "function": {"name": name, "parameters": params}}


class _Agent:
    def __init__(self, names: list[str]) -> None:
        self.tools = [_definition(n, command={"type": "string"}) for n in names]
        self.valid_tool_names = set(names)
        self.invalidated = 0

    def _invalidate_system_prompt(self) -> None:
        self.invalidated += 1


def test_the_toolset_keeps_decided_tools_and_gives_terminal_the_sandbox_arguments() -> None:
    agent = _Agent(["terminal", "process", "read_file", "memory", "some_plugin_tool"])
    offered = shape_toolset(agent)
    assert offered == ["terminal", "read_file", "memory"]
    assert agent.valid_tool_names == {"terminal", "read_file", "memory"}
    terminal = agent.tools[0]["function"]["parameters"]["properties"]
    assert set(terminal) == {"command", "sandbox", "justification"}
    assert terminal["sandbox"]["enum"] == ["sandbox", "network", "none"]
    assert agent.invalidated == 1


def test_every_tool_has_exactly_one_kind_of_decision() -> None:
    assert not set(ROUTED) & set(DECISIONS)
    assert not set(NOT_SERVED) & (set(ROUTED) | set(DECISIONS))
    assert {"terminal", "read_file", "write_file", "patch", "search_files"} == set(ROUTED)


def test_workdir_becomes_a_cd_and_background_is_refused(tmp_path: Path) -> None:
    (tmp_path / "sub dir").mkdir()
    shaped, ignored = _terminal_args(
        {"command": "make", "workdir": "sub dir", "timeout": 30, "pty": True}, str(tmp_path)
    )
    assert shaped == {"command": f"cd -- '{tmp_path / 'sub dir'}' && make", "timeout": 30}
    assert ignored == ["pty"]
    same, _ = _terminal_args({"command": "ls", "workdir": "."}, str(tmp_path))
    assert same == {"command": "ls"}
    missing, _ = _terminal_args({"command": "ls", "workdir": "nope"}, str(tmp_path))
    assert not isinstance(missing, dict) and "workdir not found" in missing.result_text
    background, _ = _terminal_args({"command": "sleep 9", "background": True}, str(tmp_path))
    assert not isinstance(background, dict) and background.failed
    assert "background processes are not available" in background.result_text


def test_a_call_tied_to_no_turn_is_refused_and_nothing_runs() -> None:
    ran: list[dict[str, Any]] = []

    def run(args: dict[str, Any]) -> str:
        ran.append(args)
        return "ran"

    result = Boundary().handle("terminal", {"command": "touch x"}, run, "no-such-task", "c1")
    assert ran == []
    assert "cannot tie this terminal call to a running session turn" in json.loads(result)["error"]


def test_what_reaches_the_network_is_asked_in_every_mode_but_full_access() -> None:
    network = ["web_search", "web_extract", "vision_analyze", "browser_navigate", "browser_cdp"]
    assert {DECISIONS[name][0] for name in network} == {"ask_every_mode"}
    assert all("network" in DECISIONS[name][1] for name in network)
    assert DECISIONS["session_search"][0] == "ask_every_mode"
    assert DECISIONS["execute_code"][0] == "command"
