"""File access shared by the file tools: paths, editor-aware reads and approved writes.

Relative paths resolve against the turn's cwd, never the process cwd. Reads ask the
editor first (it may hold unsaved buffers) and writes go through the editor when it
offers that; an editor's refusal (``EditorRefused``) is final, never retried on the disk.
Every change is proposed to the user, all files of one call at once, and
nothing is written unless the user approves.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from acpwire.agent.embedded.tools.args import ToolArgError
from acpwire.agent.embedded.tools.base import ToolContext, ToolOutcome, failure
from acpwire.agent.embedded.tools.fs.regular import (
    FileRefused,
    check_regular,
    read_regular,
    too_large,
)
from acpwire.agent.embedded.tools.fs.safewrite import (
    MovedError,
    Pin,
    check_pinned,
    pin,
    remove_pinned,
    write_pinned,
)
from acpwire.agent.seam import EditorRefused, EditProposal

EDIT_DENIED = "Edit denied by the user; file was not modified."


def resolve_path(cwd: str, path: str) -> str:
    """An absolute, normalised path; relative ones are taken from ``cwd``."""
    expanded = os.path.expanduser(path)
    if not os.path.isabs(expanded):
        expanded = os.path.join(cwd, expanded)
    return os.path.normpath(expanded)


def split_lines(text: str) -> list[str]:
    """Lines as editors and ``patch`` count them: ended by LF or CRLF only (``splitlines``
    also breaks at form feeds, U+2028... inside a line)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_text(ctx: ToolContext, path: str) -> str | None:
    """The text of ``path`` (editor buffer first, then disk); None when it does not exist.

    A device, FIFO or socket (or a link to one) is refused before the editor or the disk
    is asked, and so is a file over ``[tools] max_file_bytes``."""
    cap = ctx.limits.max_file_bytes
    try:
        check_regular(path)
    except FileRefused:
        raise
    except ToolArgError:
        pass  # not stat-able here (permissions...): the editor may still read it
    text = ctx.hooks.read_text_file(path)
    if text is not None:
        if len(text) > cap:
            raise too_large(path, len(text), cap)
        return text
    return read_disk(path, cap)


def read_disk(path: str, cap: int) -> str | None:
    """The text of ``path`` on disk (the editor not asked); None when it does not exist."""
    data = read_regular(path, cap)
    if data is None:
        return None
    if b"\0" in data[:8192]:
        raise ToolArgError(f"{path} looks like a binary file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolArgError(f"{path} is not UTF-8 text") from exc


def check_size(ctx: ToolContext, path: str, text: str) -> None:
    """Refuse an edit whose resulting text is over ``[tools] max_file_bytes``."""
    cap = ctx.limits.max_file_bytes
    size = len(text) if len(text) > cap else len(text.encode("utf-8", "surrogatepass"))
    if size > cap:
        raise ToolArgError(
            f"the new content of {path} would be {size} bytes, over the cap of {cap} bytes "
            "([tools] max_file_bytes): nothing was written"
        )


def read_existing(ctx: ToolContext, path: str) -> str:
    text = read_text(ctx, path)
    if text is None:
        raise ToolArgError(f"file not found: {path}")
    return text


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's planned change; a deletion is proposed as a change to empty text."""

    path: str
    old_text: str | None
    new_text: str
    delete: bool = False

    def proposal(self) -> EditProposal:
        return EditProposal(path=self.path, old_text=self.old_text, new_text=self.new_text)


def commit_changes(ctx: ToolContext, changes: list[FileChange]) -> ToolOutcome | None:
    """Ask approval for all ``changes`` at once and apply them.

    Each path's resolved target is pinned before asking; the write lands on that target
    or fails (see :mod:`acpwire.agent.embedded.tools.fs.safewrite`). Returns a failed outcome
    (denied, moved, or a write error), or None when all were applied.
    """
    pins = [pin(change.path) for change in changes]
    if not ctx.hooks.approve_edits(ctx.call_id, [change.proposal() for change in changes]):
        return failure(EDIT_DENIED)
    # The user may have edited a file while the approval was pending: never overwrite that.
    # A new file is checked on disk only: the editor was asked already (acpx prints
    # "Resource not found" for each read of a file that does not exist).
    for change, target in zip(changes, pins, strict=True):
        try:
            check_pinned(target)
            now = (
                read_disk(target.resolved, ctx.limits.max_file_bytes)
                if change.old_text is None
                else read_text(ctx, target.resolved)
            )
        except MovedError as exc:
            return failure(f"{exc}; nothing was written.")
        except FileRefused as exc:  # a FIFO or device put there meanwhile: never open it
            return failure(f"{exc}; it changed while the edit waited for approval")
        except ToolArgError:
            now = change.old_text  # unreadable now as before (a directory...): the write says
        if now != change.old_text:
            return failure(
                f"{change.path} changed while the edit waited for approval; nothing was "
                "written. Read it again and redo the edit."
            )
    done: list[str] = []
    for change, target in zip(changes, pins, strict=True):
        try:
            _apply(ctx, change, target)
        except EditorRefused as exc:
            return failure(str(exc), refused_by_editor=True, already_written=done)
        except OSError as exc:
            return failure(
                f"could not write {change.path}: {exc.strerror or exc}", already_written=done
            )
        done.append(change.path)
    return None


def _apply(ctx: ToolContext, change: FileChange, target: Pin) -> None:
    if change.delete:
        remove_pinned(target)
        return
    check_pinned(target)
    if ctx.hooks.write_text_file(target.resolved, change.new_text):
        return
    write_pinned(target, change.new_text.encode("utf-8"))
