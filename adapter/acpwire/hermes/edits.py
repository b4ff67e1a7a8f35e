"""Edit approvals for Hermes' file tools: real per-file diffs, read from the turn's cwd.

Hermes builds an edit proposal (tool name, path, old and new text) before ``write_file``
or ``patch`` runs and asks the requester bound for the turn. Two things are fixed here:
relative paths are resolved against the session's directory (Hermes uses the process
cwd), and a V4A patch becomes one real diff per file instead of the patch text shown as
the "new" file.
"""

from __future__ import annotations

import contextvars
import logging
import os
import re
from typing import Any

from acpwire.agent.seam import EditProposal

logger = logging.getLogger(__name__)

# The cwd of the acpwire turn running on this thread (None outside one).
TURN_CWD: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "acpwire_hermes_turn_cwd", default=None
)


def abspath(path: object, cwd: str) -> str | None:
    """``path`` (``~`` expanded) resolved against ``cwd``; None if it is no path."""
    if not isinstance(path, str) or not path:
        return None
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except (FileNotFoundError, IsADirectoryError):
        return None


def _v4a_edits(patch: str, cwd: str) -> list[EditProposal]:
    """One proposal per file of a V4A patch, with its full old and new text."""
    from acpwire.agent.tools.v4a import apply_hunks, parse_patch  # the default agent's parser

    edits: list[EditProposal] = []
    for op in parse_patch(patch):
        path = abspath(op.path, cwd) or op.path
        if op.kind == "add":
            edits.append(EditProposal(path, None, "\n".join(op.added) + "\n" if op.added else ""))
            continue
        old = _read(path)
        if op.kind == "delete":
            edits.append(EditProposal(path, old, ""))
            continue
        new = apply_hunks(old or "", op.hunks, path)
        if op.move_to is None:
            edits.append(EditProposal(path, old, new))
        else:
            target = abspath(op.move_to, cwd) or op.move_to
            edits += [EditProposal(target, None, new), EditProposal(path, old, "")]
    return edits


_PATCH_FILE = re.compile(
    r"^\*\*\*\s*(?:Add|Update|Delete|Move)\s+File\s*:\s*(.+?)\s*(?:->\s*(.+?)\s*)?$"
    r"|^\*\*\*\s*Move\s+to\s*:\s*(.+?)\s*$",
    re.MULTILINE | re.IGNORECASE,
)


def _unread_patch(proposal: Any, patch: str, cwd: str) -> list[EditProposal]:
    """A patch only Hermes understands: every file it may touch (Hermes' own list and
    every file header found however it is spelled) as a proposal that is always asked;
    the first shows Hermes' view of the change, the others point to it."""
    named = [p.strip() for p in str(proposal.path or "").split(", ")]
    named += [p for m in _PATCH_FILE.finditer(patch) for p in m.groups() if p]
    paths = list(dict.fromkeys(abspath(p, cwd) or p for p in named if p))
    if not paths:
        paths = [cwd]
    first, rest = paths[0], paths[1:]
    edits = [EditProposal(first, proposal.old_text, str(proposal.new_text), must_ask=True)]
    for path in rest:
        note = f"(changed by the patch shown for {first})"
        edits.append(EditProposal(path, _read(path), note, must_ask=True))
    return edits


def edit_proposals(proposal: Any, cwd: str) -> list[EditProposal]:
    """The seam's proposals for Hermes' ``EditProposal`` (tool_name, path, old_text,
    new_text, arguments), paths resolved against ``cwd``.

    Hermes shows a V4A patch as one pseudo-diff (old text of the first file, the patch as
    new text); here it becomes one real diff per file, as the default agent asks.
    """
    args = proposal.arguments if isinstance(proposal.arguments, dict) else {}
    if proposal.tool_name == "patch" and args.get("mode") == "patch":
        patch = str(args.get("patch") or "")
        try:
            edits = _v4a_edits(patch, cwd)
        except Exception as exc:
            logger.info("a patch acpwire cannot read (%s): every file it names is asked", exc)
            edits = []
        return edits or _unread_patch(proposal, patch, cwd)
    path = str(proposal.path)
    full = abspath(path, cwd) or path
    old_text = proposal.old_text if full == path else _read(full)
    return [EditProposal(full, old_text, str(proposal.new_text))]


def install_edit_paths(edit_approval: Any) -> None:
    """Make Hermes build edit proposals in the turn's cwd, not the process cwd.

    ``edit_approval`` is Hermes' ``acp_adapter.edit_approval`` module. Installed once:
    outside an acpwire turn (no cwd bound) Hermes' builder is unchanged.
    """
    original = edit_approval.build_edit_proposal
    if getattr(original, "acpwire_wrapped", False):
        return

    def build(tool_name: str, arguments: dict[str, Any]) -> Any:
        cwd = TURN_CWD.get()
        path = abspath(arguments.get("path"), cwd) if cwd else None
        return original(tool_name, {**arguments, "path": path} if path else arguments)

    build.acpwire_wrapped = True  # type: ignore[attr-defined]  # a marker on a function
    edit_approval.build_edit_proposal = build
