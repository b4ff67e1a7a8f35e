"""Empty directories put at missing protected places for the time of one sandboxed command.

bubblewrap binds only existing paths read-only, and makes a missing mount point itself, on
the real disk. So acpwire makes it: an empty directory (``.vscode``, ``.idea``, ``.husky``,
``.git``, a missing ``core.hooksPath`` directory...) bound read-only over itself, which a
command cannot fill, and removes it when the command ends, only if it is still the same
inode and still empty (``rmdir`` fails on a directory someone put something in
meanwhile; then it stays, and the log says so).

Commands of one process that overlap share a placeholder (counted); a journal per
process in acpwire's home (``sandbox/placeholders/<pid>-<start>.json``) names each one,
written before the directory is made, so that leftovers of a process that died (killed,
crashed) are removed by the next process that runs a command, with the same checks, once
that process is seen gone (its pid and start time).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import threading
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Placeholders"]

_log = logging.getLogger(__name__)

_CLOCK_SLACK_NS = 50_000_000
"""File-system timestamps come from a coarse clock, a little behind ``time.time_ns()``."""


def _start_time(pid: int) -> str | None:
    """A process's start time (clock ticks since boot), None when it does not exist."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


@dataclass(slots=True)
class _Held:
    dev: int | None
    ino: int | None
    made_ns: int
    ctime: int | None = None
    count: int = 0


def _remove(
    path: str, dev: int | None, ino: int | None, made_ns: int, ctime: int | None = None
) -> bool:
    """Remove the placeholder at ``path`` if it is still ours (device, inode and ctime:
    an inode number is soon reused) and empty (True: removed)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        _log.warning("sandbox: placeholder %s cannot be checked: %s", path, exc)
        return False
    if ino is None:
        ours = st.st_ctime_ns >= made_ns - _CLOCK_SLACK_NS  # made or not, by one that died
    else:
        ours = (st.st_dev, st.st_ino) == (dev, ino) and ctime in (None, st.st_ctime_ns)
    if not stat.S_ISDIR(st.st_mode) or not ours:
        _log.info("sandbox: %s is no longer acpwire's placeholder; left alone", path)
        return False
    try:
        os.rmdir(path)
    except OSError as exc:
        _log.warning("sandbox: placeholder %s kept (%s): something was put in it", path, exc)
        return False
    return True


class Placeholders:
    """The placeholders of this process, journaled under ``directory``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.lock = threading.Lock()
        self.held: dict[str, _Held] = {}
        me = os.getpid()
        self.journal = directory / f"{me}-{_start_time(me) or 0}.json"

    def acquire(self, path: str) -> tuple[int, int, int] | None:
        """Hold a placeholder at ``path`` (made now, or shared with a running command):
        its ``(dev, ino, ctime)``, or None when something else is there or it cannot be made."""
        with self.lock:
            held = self.held.get(path)
            if held is None:
                if os.path.lexists(path):
                    return None
                held = _Held(None, None, time.time_ns())
                self.held[path] = held
                try:
                    self._write()  # the intent first: a crash after mkdir leaves a record
                    os.mkdir(path, 0o755)
                except OSError as exc:
                    del self.held[path]
                    self._write_quietly()
                    _log.debug("sandbox: no placeholder at %s: %s", path, exc)
                    return None
            try:
                st = os.lstat(path)
            except OSError:
                st = None
            fresh = held.ino is None
            if (
                st is None
                or not stat.S_ISDIR(st.st_mode)
                or (not fresh and (held.ino, held.ctime) != (st.st_ino, st.st_ctime_ns))
            ):
                if held.count == 0:
                    del self.held[path]
                    self._write_quietly()
                return None  # replaced meanwhile: not ours to bind
            if fresh:
                held.dev, held.ino, held.ctime = st.st_dev, st.st_ino, st.st_ctime_ns
                self._write_quietly()
            held.count += 1
            return st.st_dev, st.st_ino, st.st_ctime_ns

    def release(self, path: str) -> None:
        """Let go of ``path``; the last holder removes it (if still ours and empty)."""
        with self.lock:
            held = self.held.get(path)
            if held is None:
                return
            held.count -= 1
            if held.count > 0:
                return
            del self.held[path]
            _remove(path, held.dev, held.ino, held.made_ns, held.ctime)
            self._write_quietly()

    def sweep(self) -> list[str]:
        """Remove the leftovers of processes that are gone; the paths removed."""
        removed: list[str] = []
        try:
            journals = [p for p in self.directory.iterdir() if p.suffix == ".json"]
        except OSError:
            return removed
        for journal in journals:
            pid, _, start = journal.stem.partition("-")
            if journal == self.journal or not pid.isdigit():
                continue
            if _start_time(int(pid)) == start:
                continue  # still running
            claimed = journal.with_name(f"{journal.name}.sweep-{os.getpid()}")
            try:
                journal.rename(claimed)  # one sweeper per journal
                entries = json.loads(claimed.read_text(encoding="utf-8")).get("entries", [])
            except (OSError, ValueError, AttributeError):
                continue
            for entry in entries if isinstance(entries, list) else []:
                with contextlib.suppress(KeyError, TypeError, ValueError):
                    path = str(entry["path"])
                    dev, ino, ctime = entry.get("dev"), entry.get("ino"), entry.get("ctime")
                    if _remove(path, dev, ino, int(entry["made_ns"]), ctime):
                        removed.append(path)
            with contextlib.suppress(OSError):
                claimed.unlink()
        if removed:
            _log.warning("sandbox: removed placeholders left by a process that died: %s", removed)
        return removed

    def _write(self) -> None:
        entries = [
            {
                "path": path,
                "dev": held.dev,
                "ino": held.ino,
                "ctime": held.ctime,
                "made_ns": held.made_ns,
            }
            for path, held in self.held.items()
        ]
        if not entries:
            with contextlib.suppress(FileNotFoundError):
                self.journal.unlink()
            return
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        scratch = self.journal.with_suffix(".tmp")
        scratch.write_text(json.dumps({"entries": entries}), encoding="utf-8")
        os.replace(scratch, self.journal)

    def _write_quietly(self) -> None:
        try:
            self._write()
        except OSError as exc:
            _log.warning("sandbox: placeholder journal %s: %s", self.journal, exc)
