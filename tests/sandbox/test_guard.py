"""The per-run guard, without running the command: what it binds read-only (protected
paths at any depth, nested repositories' git directories, a link's target inside the
workspace but never the workspace itself, placeholders at missing fixed places), that
its placeholders go at the end, and what it does past its budgets."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from acpwire.agent.seam import GuardRefused
from acpwire.sandbox.protected import guard
from acpwire.sandbox.protected.guard import SandboxGuard


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    user = tmp_path / "user"
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))
    return user


def _guard(work: Path, tmp_path: Path) -> SandboxGuard:
    return SandboxGuard(bwrap="bwrap", command="true", env={}, cwd=str(work), home=tmp_path / "cfg")


def _ro_binds(argv: tuple[str, ...]) -> set[str]:
    return {argv[i + 1] for i, arg in enumerate(argv) if arg == "--ro-bind" and argv[i + 1] != "/"}


def test_binds_every_depth_and_holds_missing_places(tmp_path: Path) -> None:
    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run(["git", "-C", str(work), "config", "core.hooksPath", ".hooks"], check=True)
    subprocess.run(["git", "init", "-q", str(work / "sub" / "repo")], check=True)
    (work / "sub" / ".envrc").write_text("x")
    (work / "sub" / ".env.local").symlink_to(".envrc")
    (work / "sub" / ".vscode").symlink_to("..")  # a link to the workspace: never bound
    (work / ".idea").mkdir()
    g = _guard(work, tmp_path)
    assert g.survey() is None
    binds = _ro_binds(g.start())
    expected = {
        work / ".git", work / "sub" / ".envrc", work / "sub" / "repo" / ".git", work / ".idea",
        work / ".vscode", work / ".husky", work / ".hooks",
    }  # fmt: skip
    assert {str(p) for p in expected} <= binds
    assert str(work) not in binds and str(work / "sub") not in binds
    for placeholder in (".vscode", ".husky", ".hooks"):
        assert (work / placeholder).is_dir()
    report = g.finish()
    assert report.removed == () and report.note == ""
    for placeholder in (".vscode", ".husky", ".hooks"):
        assert not (work / placeholder).exists()
    assert (work / ".idea").is_dir()


def _wide_workspace(work: Path) -> Path:
    """30 directories of 3 files: more than a walk with a tiny budget lists."""
    for n in range(30):
        (work / f"d{n}").mkdir(parents=True)
        for name in ("a", "b", "c"):
            (work / f"d{n}" / name).write_text("x")
    return work


def test_past_the_budget_it_says_why_and_will_not_start_unasked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = _wide_workspace(tmp_path / "work")
    monkeypatch.setattr(guard, "WALK_ENTRIES", 5)
    monkeypatch.setattr(guard, "CHECK_ENTRIES", 5)
    g = _guard(work, tmp_path)
    assert "too large to find all its protected paths" in (g.survey() or "")
    with pytest.raises(GuardRefused, match="run it again to be asked"):
        g.start()
    assert not (work / ".vscode").exists()  # nothing prepared
    g.incomplete_ok = True  # the user was asked and allowed it
    assert g.start()
    g.finish()


def test_too_many_protected_paths_is_a_reason_to_ask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    for n in range(5):
        (work / f".env.{n}").write_text("x")
    monkeypatch.setattr(guard, "MAX_BINDS", 3)
    g = _guard(work, tmp_path)
    assert "more than the 3 the sandbox holds read-only" in (g.survey() or "")
    g.incomplete_ok = True
    assert len(_ro_binds(g.start()) & {str(work / f".env.{n}") for n in range(5)}) == 3
    g.finish()


def test_what_the_walk_had_not_reached_is_not_taken_for_the_command_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = _wide_workspace(tmp_path / "work")
    (work / "d29" / ".envrc").write_text("the user's\n")
    monkeypatch.setattr(guard, "WALK_ENTRIES", 5)
    g = _guard(work, tmp_path)
    assert g.survey() is not None
    g.incomplete_ok = True
    g.start()
    report = g.finish()  # the check after it lists the rest: found, but not made now
    assert report.removed == ()
    assert (work / "d29" / ".envrc").read_text() == "the user's\n"
    assert g.trees[0].complete


def test_a_directory_full_of_protected_entries_is_bound_whole(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "fixtures" / "keys").mkdir(parents=True)
    for n in range(guard.GROUP_BINDS):
        (work / "fixtures" / "keys" / f"k{n}.pem").write_text("x")
    (work / "fixtures" / "keys" / "Makefile").write_text("x")
    for n in range(guard.GROUP_BINDS):
        (work / f".env.{n}").write_text("x")  # at the root: never the root itself
    g = _guard(work, tmp_path)
    assert g.survey() is None
    binds = _ro_binds(g.start())
    g.finish()
    assert str(work / "fixtures" / "keys") in binds
    assert not any(bind.endswith(".pem") for bind in binds)
    assert {str(work / f".env.{n}") for n in range(guard.GROUP_BINDS)} <= binds
    assert str(work) not in binds


def test_no_git_placeholder_inside_a_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "sub").mkdir()
    g = _guard(repo / "sub", tmp_path)
    g.survey()
    g.start()
    try:
        assert not (repo / "sub" / ".git").exists()  # git and tools still find repo/
        assert (repo / "sub" / ".vscode").is_dir()
    finally:
        g.finish()
    outside = tmp_path / "plain"
    outside.mkdir()
    g = _guard(outside, tmp_path)
    g.survey()
    g.start()
    try:
        assert (outside / ".git").is_dir() and list((outside / ".git").iterdir()) == []
    finally:
        g.finish()
    assert not (outside / ".git").exists()
