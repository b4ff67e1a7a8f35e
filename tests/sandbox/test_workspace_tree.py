"""The workspace walk that finds protected paths at any depth: what it finds and skips,
how a refresh sees changes (also with a directory's mtime set back), its budget, and its
fast name test agreeing with the protected list."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from acpwire.approval.protected import is_sensitive
from acpwire.sandbox.protected._match import Matcher
from acpwire.sandbox.protected.tree import RACY_NS, WorkspaceTree
from tests.support.homes import isolated_home


def _full(tree: WorkspaceTree) -> bool:
    """A refresh whose budget a test workspace never reaches."""
    return tree.refresh(entries=10**6, seconds=60.0, max_dirs=10**5)


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolated_home(tmp_path, monkeypatch)


def _tree(root: Path, extra: tuple[str, ...] = (), skip: tuple[str, ...] = ()) -> WorkspaceTree:
    tree = WorkspaceTree(str(root), Matcher(extra), skip)
    assert _full(tree)
    return tree


def _rel(tree: WorkspaceTree) -> set[str]:
    return {os.path.relpath(path, tree.root) for path in tree.found}


def _workspace(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    for directory in ("sub", "packages/a/.vscode", "src/deep/er", "vendor/lib", "docs"):
        (work / directory).mkdir(parents=True)
    (work / "sub" / ".envrc").write_text("export A=1\n")
    (work / "packages" / "a" / ".vscode" / "settings.json").write_text("{}")
    (work / "src" / "deep" / "er" / ".env.local").write_text("X=1\n")
    (work / "src" / "main.py").write_text("print()\n")
    (work / "docs" / "key.pem").write_text("k\n")
    (work / "docs" / "id_ed25519.pub").write_text("public\n")
    subprocess.run(["git", "init", "-q", str(work / "vendor" / "lib")], check=True)
    subprocess.run(["git", "init", "-q", "--bare", str(work / "mirror")], check=True)
    return work


def test_finds_protected_paths_at_every_depth_and_skips_their_insides(tmp_path: Path) -> None:
    tree = _tree(_workspace(tmp_path))
    assert _rel(tree) == {
        "sub/.envrc",
        "packages/a/.vscode",
        "src/deep/er/.env.local",
        "docs/key.pem",
        "vendor/lib/.git",
        "mirror",
    }
    assert tree.found[str(tmp_path / "work" / "mirror")].reason == "a bare git repository"
    listed = set(tree.dirs)
    assert not any("/.git" in path or "/.vscode" in path for path in listed)
    assert str(tmp_path / "work" / "mirror" / "objects") not in listed
    assert tree.complete


def test_user_globs_match_names_and_whole_paths(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "a" / "secrets").mkdir(parents=True)
    (work / "a" / "secrets" / "db.txt").write_text("x")
    (work / "b.token").write_text("x")
    (work / "plain.txt").write_text("x")
    tree = _tree(work, extra=("*.token", "*/secrets/*"))
    assert _rel(tree) == {"a/secrets/db.txt", "b.token"}


def test_a_refresh_sees_new_and_removed_entries_even_with_the_mtime_set_back(
    tmp_path: Path,
) -> None:
    work = _workspace(tmp_path)
    time.sleep(RACY_NS / 1e9 + 0.02)  # listed once it is no longer racy
    tree = _tree(work)
    assert not any(known.racy for known in tree.dirs.values())
    deep = work / "src" / "deep"
    before = deep.stat()
    (deep / ".envrc").write_text("evil\n")
    os.utime(deep, ns=(before.st_atime_ns, before.st_mtime_ns))  # only ctime tells now
    (work / "sub" / ".envrc").unlink()
    assert _full(tree)
    assert "src/deep/.envrc" in _rel(tree)
    assert "sub/.envrc" not in _rel(tree)
    assert tree.listed == 2  # only src/deep (er, .envrc) and sub (now empty) listed again


def test_a_directory_replaced_by_a_link_is_not_followed(tmp_path: Path) -> None:
    work = _workspace(tmp_path)
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / ".envrc").write_text("not ours\n")
    tree = _tree(work)
    subprocess.run(["rm", "-rf", str(work / "src")], check=True)
    (work / "src").symlink_to(outside)
    assert _full(tree)
    assert not any(path.startswith(str(outside)) for path in tree.dirs)
    assert not any("src/" in path for path in _rel(tree))


def test_the_budget_leaves_the_rest_pending_for_the_next_refresh(tmp_path: Path) -> None:
    work = _workspace(tmp_path)
    for n in range(30):
        (work / f"d{n}").mkdir()
        (work / f"d{n}" / "f").write_text("x")
    tree = WorkspaceTree(str(work), Matcher())
    assert not tree.refresh(entries=10, seconds=60.0, max_dirs=10**5)
    assert not tree.complete and tree.pending
    while not tree.refresh(entries=10, seconds=60.0, max_dirs=10**5):
        pass
    assert "sub/.envrc" in _rel(tree)
    capped = WorkspaceTree(str(work), Matcher())
    assert not capped.refresh(entries=10**6, seconds=60.0, max_dirs=5)
    assert not capped.complete


def test_what_a_cut_check_left_is_reported_late(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    tree = _tree(work)
    for n in range(20):
        (work / "made" / f"d{n}").mkdir(parents=True)
    (work / "made" / "d19" / ".envrc").write_text("evil\n")
    assert not tree.refresh(entries=3, seconds=60.0, max_dirs=10**5, suspect=True)
    assert tree.late == []
    assert _full(tree)
    assert [os.path.relpath(p.path, work) for p in tree.late] == ["made/d19/.envrc"]


def test_hidden_homes_are_not_walked(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "hidden" / "x").mkdir(parents=True)
    (work / "hidden" / "x" / ".env").write_text("x")
    tree = _tree(work, skip=(str(work / "hidden"),))
    assert tree.found == {}


@pytest.mark.parametrize(
    "name",
    [
        ".git", ".GIT", ".vscode", ".idea", ".husky", ".envs", ".ssh", ".aws", ".gnupg",
        ".env", ".env.local", ".ENV-prod", ".envrc", ".envrc.local", "id_rsa", "id_ed25519_sk",
        "id_rsa.bak", "id_rsa.pub", "cert.pem", "x.KEY", "a.p12", "b.pfx", "main.py", ".environment",
        "README", "keys", ".gitignore", ".github", ".env\nx",
    ],
)  # fmt: skip
def test_the_fast_test_never_misses_what_the_list_protects(name: str, tmp_path: Path) -> None:
    matcher = Matcher()
    path = str(tmp_path / "work" / name)
    expected = is_sensitive(path)
    found = matcher.reason(path) if matcher.hit(path, name, False) else None
    assert found == expected


def test_the_fast_test_knows_the_places_under_the_home(home: Path) -> None:
    (home / ".config" / "autostart").mkdir(parents=True)
    (home / ".bashrc").write_text("x")
    (home / "project").mkdir()
    tree = _tree(home)
    assert {".bashrc", ".config/autostart"} <= _rel(tree)
    assert "project" not in _rel(tree)


def test_a_cut_check_lists_changed_directories_first_and_suspects_the_rest(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    (work / "old").mkdir(parents=True)
    tree = _tree(work)
    for n in range(30):
        (work / "made" / f"d{n}").mkdir(parents=True)
    (work / "old" / ".env").write_text("evil\n")  # in a directory known before
    assert not tree.refresh(entries=2, seconds=60.0, max_dirs=10**5, suspect=True)
    assert "old/.env" in _rel(tree)  # changed known directories came first
    assert _full(tree)
    assert tree.late == []  # what the cut left held nothing protected


def test_what_the_walk_had_not_reached_is_never_suspect(tmp_path: Path) -> None:
    work = tmp_path / "work"
    for n in range(10):
        (work / f"d{n}" / "deeper").mkdir(parents=True)
        (work / f"d{n}" / "deeper" / ".envrc").write_text("the user's\n")
    tree = WorkspaceTree(str(work), Matcher())
    assert not tree.refresh(entries=3, seconds=60.0, max_dirs=10**5)
    while not tree.refresh(entries=3, seconds=60.0, max_dirs=10**5, suspect=True):
        pass
    assert len(tree.found) == 10 and tree.late == []
