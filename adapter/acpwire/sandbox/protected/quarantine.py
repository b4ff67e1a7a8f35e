"""Moving protected paths a sandboxed command created out of the workspace, never deleting.

Each batch goes to ``<acpwire home>/quarantine/<time>-<pid>-<n>/`` (mode 0700, hidden from
sandboxed commands with the rest of the home), under the path it had in its workspace
root, with a ``manifest.json`` saying where each entry came from and why it was moved. A
rename when the home is on the same file system; otherwise a copy (links copied as links,
never followed) and then the original removed, for entries up to :data:`COPY_LIMIT` bytes
and :data:`COPY_ENTRIES` entries made of files, directories and links only. An entry that
cannot be copied is renamed in its own directory to an inert name
(``acpwire-quarantined-<time>-<n>``) that no tool loads and the protected list does not
name. Every move is logged as a warning.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import shutil
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from acpwire.sandbox.protected.tree import Protected

__all__ = ["COPY_ENTRIES", "COPY_LIMIT", "Moved", "quarantine"]

_log = logging.getLogger(__name__)

COPY_LIMIT: Final = 64 * 1024 * 1024
COPY_ENTRIES: Final = 20_000
_batches = itertools.count(1)


@dataclass(frozen=True, slots=True)
class Moved:
    """One protected path taken out of the workspace: from where, why, to where."""

    path: str
    reason: str
    moved_to: str | None
    """None: it could not be moved (``problem`` says why) and is still there."""
    problem: str = ""


def _copyable(path: str) -> bool:
    """Only files, directories and links, within the copy limits (nothing followed)."""
    size, count = 0, 0
    stack = [path]
    while stack:
        current = stack.pop()
        st = os.lstat(current)
        count += 1
        if stat.S_ISDIR(st.st_mode):
            stack += [os.path.join(current, name) for name in os.listdir(current)]
        elif stat.S_ISREG(st.st_mode):
            size += st.st_size
        elif not stat.S_ISLNK(st.st_mode):
            return False  # a FIFO or a device: opening it could block or read forever
        if size > COPY_LIMIT or count > COPY_ENTRIES:
            return False
    return True


def _move(source: str, target: Path) -> str:
    """Move ``source`` to ``target``; how (``renamed``, ``copied``) or raise OSError."""
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        os.rename(source, target)
        return "renamed"
    except OSError as exc:
        if exc.errno != 18 or not _copyable(source):  # 18: EXDEV, another file system
            raise
    if os.path.isdir(source) and not os.path.islink(source):
        shutil.copytree(source, target, symlinks=True)
        shutil.rmtree(source)
    else:
        shutil.copy2(source, target, follow_symlinks=False)
        os.unlink(source)
    return "copied"


def _inert(source: str, stamp: str, n: int) -> str:
    target = os.path.join(os.path.dirname(source), f"acpwire-quarantined-{stamp}-{n}")
    os.rename(source, target)
    return target


def quarantine(items: Iterable[Protected], *, root: str, home: Path) -> list[Moved]:
    """Move ``items`` (inside ``root``) to a new quarantine batch under ``home``."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    batch = home / "quarantine" / f"{stamp}-{os.getpid()}-{next(_batches)}"
    moved: list[Moved] = []
    done: list[str] = []
    for n, item in enumerate(sorted(items, key=lambda found: found.path), 1):
        if any(item.path.startswith(parent + os.sep) for parent in done):
            continue  # inside an entry already moved
        try:
            st = os.lstat(item.path)
        except FileNotFoundError:
            continue  # gone already
        except OSError as exc:
            moved.append(Moved(item.path, item.reason, None, f"cannot check it: {exc}"))
            continue
        if (st.st_dev, st.st_ino, st.st_ctime_ns) != (item.dev, item.ino, item.ctime):
            continue  # changed or replaced since it was found: judged again by a next check
        relative = os.path.relpath(item.path, root)
        target = batch / Path(root).name / relative
        try:
            home.joinpath("quarantine").mkdir(mode=0o700, parents=True, exist_ok=True)
            how = _move(item.path, target)
            moved.append(Moved(item.path, item.reason, str(target)))
        except OSError as exc:
            try:
                inert = _inert(item.path, stamp, n)
            except OSError as inner:
                problem = f"cannot be moved ({exc}) nor renamed ({inner})"
                moved.append(Moved(item.path, item.reason, None, problem))
                _log.error("sandbox: protected path %s left in place: %s", item.path, problem)
                continue
            how = f"renamed in place ({exc})"
            moved.append(Moved(item.path, item.reason, inert))
        done.append(item.path)
        _log.warning(
            "sandbox: a command created the protected path %s (%s); %s to %s",
            item.path,
            item.reason,
            how,
            moved[-1].moved_to,
        )
    if moved and batch.is_dir():
        manifest = [
            {"path": m.path, "reason": m.reason, "moved_to": m.moved_to, "problem": m.problem}
            for m in moved
        ]
        (batch / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return moved
