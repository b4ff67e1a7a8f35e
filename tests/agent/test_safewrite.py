"""Pinned writes on real files: what changes between the pin and the write fails it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acpwire.agent.embedded.tools.fs.safewrite import MovedError, pin, remove_pinned, write_pinned


def test_a_new_file_is_created_and_a_missing_parent_made(tmp_path: Path) -> None:
    target = pin(str(tmp_path / "a" / "b" / "new.txt"))
    write_pinned(target, b"hi\n")
    assert (tmp_path / "a" / "b" / "new.txt").read_bytes() == b"hi\n"


def test_an_existing_file_keeps_its_inode(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("old\n")
    before = path.stat().st_ino
    write_pinned(pin(str(path)), b"new\n")
    assert path.read_text() == "new\n" and path.stat().st_ino == before


def test_a_hard_link_added_after_the_pin_fails(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("old\n")
    target = pin(str(path))
    os.link(path, tmp_path / "g.txt")
    with pytest.raises(MovedError, match="hard link"):
        write_pinned(target, b"new\n")
    assert path.read_text() == "old\n"


def test_a_file_replaced_after_the_pin_fails(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("old\n")
    target = pin(str(path))
    (tmp_path / "other.txt").write_text("other\n")
    with path.open() as held:  # the old inode stays allocated: no reuse of its number
        os.replace(tmp_path / "other.txt", path)
        with pytest.raises(MovedError, match="no longer the file"):
            write_pinned(target, b"new\n")
        with pytest.raises(MovedError):
            remove_pinned(target)
        assert held.read() == "old\n"
    assert path.read_text() == "other\n"


def test_a_file_appearing_at_a_new_name_is_not_overwritten(tmp_path: Path) -> None:
    target = pin(str(tmp_path / "new.txt"))
    (tmp_path / "new.txt").write_text("theirs\n")
    with pytest.raises(MovedError, match="appeared"):
        write_pinned(target, b"mine\n")
    assert (tmp_path / "new.txt").read_text() == "theirs\n"


def test_remove_unlinks_the_name_only(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("x\n")
    remove_pinned(pin(str(path)))
    assert not path.exists()
