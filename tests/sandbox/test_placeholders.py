"""Placeholders at missing protected places: made empty, shared while commands overlap,
removed only while still acpwire's and empty, and the leftovers of a process killed while
holding them removed by the next process (a real child killed with SIGKILL)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from acpwire.sandbox.protected.placeholders import Placeholders


def test_made_shared_and_removed_by_the_last_holder(tmp_path: Path) -> None:
    book = Placeholders(tmp_path / "home" / "journal")
    path = str(tmp_path / ".vscode")
    first = book.acquire(path)
    assert first is not None and os.listdir(path) == []
    assert book.journal.is_file()
    assert json.loads(book.journal.read_text())["entries"][0]["path"] == path
    assert book.acquire(path) == first  # a second command shares it
    book.release(path)
    assert os.path.isdir(path)
    book.release(path)
    assert not os.path.lexists(path)
    assert not book.journal.exists()


def test_an_existing_path_is_never_taken(tmp_path: Path) -> None:
    book = Placeholders(tmp_path / "journal")
    (tmp_path / ".idea").mkdir()
    (tmp_path / ".idea" / "workspace.xml").write_text("mine")
    assert book.acquire(str(tmp_path / ".idea")) is None
    book.release(str(tmp_path / ".idea"))
    assert (tmp_path / ".idea" / "workspace.xml").read_text() == "mine"


def test_what_the_user_put_there_meanwhile_stays(tmp_path: Path) -> None:
    book = Placeholders(tmp_path / "journal")
    filled, replaced = tmp_path / ".vscode", tmp_path / ".husky"
    assert book.acquire(str(filled)) and book.acquire(str(replaced))
    (filled / "settings.json").write_text("{}")
    replaced.rmdir()
    time.sleep(0.02)  # a later ctime: the inode number itself is often reused at once
    replaced.mkdir()  # another directory at the same name: not ours
    book.release(str(filled))
    book.release(str(replaced))
    assert (filled / "settings.json").read_text() == "{}"
    assert replaced.is_dir()


HOLDER = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from acpwire.sandbox.protected.placeholders import Placeholders
    book = Placeholders(Path(sys.argv[1]))
    for path in sys.argv[2:]:
        assert book.acquire(path) is not None
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


def test_leftovers_of_a_killed_process_are_swept_safely(tmp_path: Path) -> None:
    journal = tmp_path / "journal"
    empty, filled = tmp_path / ".git", tmp_path / ".idea"
    done = subprocess.run(
        [sys.executable, "-c", HOLDER, str(journal), str(empty), str(filled)], check=False
    )
    assert done.returncode == -signal.SIGKILL
    assert empty.is_dir() and filled.is_dir()  # left behind by the crash
    (filled / "mine.xml").write_text("the user's")
    book = Placeholders(journal)
    assert book.sweep() == [str(empty)]
    assert not empty.exists()
    assert (filled / "mine.xml").read_text() == "the user's"
    assert list(journal.iterdir()) == []
    assert book.sweep() == []


def test_a_running_process_placeholders_are_not_swept(tmp_path: Path) -> None:
    journal = tmp_path / "journal"
    mine = Placeholders(journal)
    path = tmp_path / ".vscode"
    assert mine.acquire(str(path))
    other = subprocess.run(
        [sys.executable, "-c", "import sys; from pathlib import Path;"
         " from acpwire.sandbox.protected.placeholders import Placeholders;"
         " print(Placeholders(Path(sys.argv[1])).sweep())", str(journal)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert other.stdout.strip() == "[]"
    assert path.is_dir()
    mine.release(str(path))
