"""The quarantine: protected paths a command created are moved out of the workspace into
acpwire's home, never deleted; across file systems (``/dev/shm``) they are copied, links
as links; what cannot be copied is renamed in place to an inert name; a path replaced
since it was found is left for the next check."""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from acpwire.sandbox.protected.quarantine import quarantine
from acpwire.sandbox.protected.tree import Protected


def _found(path: Path, reason: str = "environment file") -> Protected:
    st = path.lstat()
    is_dir, is_link = path.is_dir(), path.is_symlink()
    return Protected(str(path), st.st_dev, st.st_ino, is_dir, is_link, reason, None, st.st_ctime_ns)


@pytest.fixture
def other_fs() -> Iterator[Path]:
    """A home on another file system than the tmp_path workspace, when there is one."""
    if not Path("/dev/shm").is_dir():
        pytest.skip("no /dev/shm")
    with tempfile.TemporaryDirectory(dir="/dev/shm") as raw:
        yield Path(raw)


def _workspace(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    (work / "sub" / ".git" / "hooks").mkdir(parents=True)
    (work / "sub" / ".git" / "hooks" / "pre-commit").write_text("evil\n")
    (work / "sub" / ".git" / "link").symlink_to("/etc/passwd")
    (work / ".envrc").write_text("evil\n")
    return work


def test_moved_with_a_manifest_and_nothing_left(tmp_path: Path) -> None:
    work, home = _workspace(tmp_path), tmp_path / "home"
    items = [_found(work / ".envrc"), _found(work / "sub" / ".git", "inside a .git directory")]
    moved = quarantine(items, root=str(work), home=home)
    assert [m.path for m in moved] == [str(work / ".envrc"), str(work / "sub" / ".git")]
    assert not (work / ".envrc").exists() and not (work / "sub" / ".git").exists()
    target = Path(moved[1].moved_to or "")
    assert target.is_relative_to(home / "quarantine")
    assert (target / "hooks" / "pre-commit").read_text() == "evil\n"
    manifest = json.loads((target.parents[2] / "manifest.json").read_text())
    assert manifest[0]["path"] == str(work / ".envrc")
    assert os.stat(home / "quarantine").st_mode & 0o077 == 0


def test_across_file_systems_copied_links_as_links(tmp_path: Path, other_fs: Path) -> None:
    work = _workspace(tmp_path)
    if work.stat().st_dev == other_fs.stat().st_dev:
        pytest.skip("/dev/shm is on the same file system here")
    moved = quarantine([_found(work / "sub" / ".git")], root=str(work), home=other_fs)
    target = Path(moved[0].moved_to or "")
    assert target.is_relative_to(other_fs) and not (work / "sub" / ".git").exists()
    assert os.readlink(target / "link") == "/etc/passwd"
    assert (target / "hooks" / "pre-commit").read_text() == "evil\n"


def test_a_fifo_across_file_systems_is_renamed_in_place(tmp_path: Path, other_fs: Path) -> None:
    work = tmp_path / "work"
    (work / ".envs").mkdir(parents=True)
    os.mkfifo(work / ".envs" / "pipe")  # copying it would block
    if work.stat().st_dev == other_fs.stat().st_dev:
        pytest.skip("/dev/shm is on the same file system here")
    (moved,) = quarantine([_found(work / ".envs")], root=str(work), home=other_fs)
    assert not (work / ".envs").exists()
    assert moved.moved_to is not None
    assert Path(moved.moved_to).parent == work
    assert Path(moved.moved_to).name.startswith("acpwire-quarantined-")


def test_replaced_or_gone_entries_are_left(tmp_path: Path) -> None:
    work = _workspace(tmp_path)
    found = _found(work / ".envrc")
    (work / ".envrc").unlink()
    time.sleep(0.02)  # a later ctime: the inode number itself is often reused at once
    (work / ".envrc").write_text("the user's own, made since\n")
    gone = Protected(str(work / ".env"), 0, 0, False, False, "environment file")
    assert quarantine([found, gone], root=str(work), home=tmp_path / "home") == []
    assert (work / ".envrc").read_text() == "the user's own, made since\n"
