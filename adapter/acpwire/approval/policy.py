"""Which file edits may skip the permission prompt.

The session mode picks an :data:`EditPolicy`. Paths are resolved against the *session* cwd
with every symlink followed (also in the parents of files that do not exist yet), so ``../``,
``~``, Windows forms and links pointing out of the workspace are judged by where the write
really lands. Protected paths (see :mod:`acpwire.approval.protected`) and hard-linked files
are always asked, whatever the policy, and never covered by a session grant.
"""

from __future__ import annotations

import logging
import os
import stat
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from types import MappingProxyType
from typing import Final, Literal, get_args

from acpwire.agent.seam import EditProposal
from acpwire.approval.protected import is_sensitive, protected_reason
from acpwire.config.paths import (
    absolute_in_cwd,
    require_absolute_cwd,
    resolve_in_cwd,
    translate_cwd,
)

__all__ = [
    "MODE_POLICIES",
    "EditBatchDecision",
    "EditDecision",
    "EditPolicy",
    "decide_edit",
    "decide_edits",
    "hard_link_count",
    "is_sensitive",
    "policy_for_mode",
    "workspace_root_of",
]

_log = logging.getLogger(__name__)

EditPolicy = Literal["ask", "workspace", "session"]
"""``ask``: every edit is asked; ``workspace``: edits inside the workspace (cwd, additional
directories, system temp dir) are not; ``session``: no edit is asked in this session."""

_POLICIES: Final = frozenset(get_args(EditPolicy))

MODE_POLICIES: Final[Mapping[str, EditPolicy]] = MappingProxyType(
    {"default": "ask", "accept_edits": "workspace", "dont_ask": "session", "full_access": "session"}
)


def policy_for_mode(mode_id: str) -> EditPolicy:
    """The edit policy of a session mode; an unknown mode asks (the safe choice)."""
    policy = MODE_POLICIES.get(mode_id)
    if policy is None:
        _log.warning("unknown session mode %r: every edit will be asked", mode_id)
        return "ask"
    return policy


def hard_link_count(path: Path) -> int:
    """The link count of the regular file ``path`` (not following a final link); 0 when
    it is missing or not a regular file."""
    try:
        info = os.lstat(path)
    except OSError:
        return 0
    return info.st_nlink if stat.S_ISREG(info.st_mode) else 0


@dataclass(frozen=True, slots=True)
class EditDecision:
    """Whether one file edit is approved without asking, and why."""

    auto_approve: bool
    reason: str
    resolved_path: Path | None
    """Where the write lands (symlinks followed); None when the path cannot be resolved."""
    sensitive: str | None = None
    """Why the target is protected (a protected path, a hard-linked file), or None."""
    requested_path: Path | None = None
    """The path as the model spelt it, made absolute (no link followed)."""
    inside: bool = False
    """The resolved target is inside the workspace (cwd, additional directories, temp)."""

    @property
    def linked(self) -> bool:
        """The write lands somewhere else than the path asked for (a symlink on the way)."""
        return self.requested_path is not None and self.requested_path != self.resolved_path

    @property
    def grantable(self) -> bool:
        """A session grant may cover this edit: a workspace file that is not protected."""
        return self.inside and self.sensitive is None

    def why_asked(self) -> list[str]:
        """The reasons shown in the permission request (empty for an ordinary file)."""
        reasons = [f"protected: {self.sensitive}"] if self.sensitive else []
        if self.requested_path is not None and not self.inside:
            reasons.append("outside the workspace")
        if self.linked:
            reasons.append(f"linked: {self.requested_path} is a link to {self.resolved_path}")
        return reasons


@dataclass(frozen=True, slots=True)
class EditBatchDecision:
    """The decision for a multi-file edit: approved without asking only if every file is."""

    auto_approve: bool
    reason: str
    decisions: tuple[EditDecision, ...]

    @property
    def grantable(self) -> bool:
        """Every file may be covered by "allow edits for this session"."""
        return all(decision.grantable for decision in self.decisions)


def _roots(
    cwd: str, extra: Iterable[str], temp_dir: str | None, wsl: bool | None
) -> list[tuple[str, Path]]:
    roots = [("the session cwd", cwd), *(("an additional directory", root) for root in extra)]
    roots.append(("the temp dir", tempfile.gettempdir() if temp_dir is None else temp_dir))
    resolved: list[tuple[str, Path]] = []
    for label, raw in roots:
        try:
            resolved.append((label, Path(require_absolute_cwd(raw, wsl=wsl)).resolve()))
        except (ValueError, OSError, RuntimeError) as exc:
            # A root we cannot resolve grants nothing; the edit is then asked.
            _log.warning("ignoring workspace root %r: %s", raw, exc)
    return resolved


def workspace_root_of(
    resolved: Path,
    cwd: str,
    workspace_roots: Iterable[str] = (),
    temp_dir: str | None = None,
    wsl: bool | None = None,
) -> str | None:
    """Which workspace root (cwd, additional directory, temp dir) holds ``resolved``, as a
    label with the root, or None when it is outside all of them."""
    return next(
        (
            f"{name} ({root})"
            for name, root in _roots(cwd, workspace_roots, temp_dir, wsl)
            if resolved.is_relative_to(root)
        ),
        None,
    )


def _protection(
    resolved: Path,
    proposal_path: str,
    extra: tuple[str, ...],
    homes: tuple[str | PurePath, ...],
    roots: list[tuple[str, Path]],
) -> str | None:
    # The spelling given matters too: a symlinked .git must not hide behind its target.
    workspaces = [root for _, root in roots]
    reason = protected_reason(resolved, extra, homes=homes, workspaces=workspaces) or is_sensitive(
        translate_cwd(proposal_path, wsl=True), extra, homes=homes
    )
    if reason is not None:
        return reason
    links = hard_link_count(resolved)
    if links > 1:
        return f"hard-linked file ({links} names: another name may be a protected file)"
    return None


def decide_edit(
    proposal_path: str,
    *,
    cwd: str,
    workspace_roots: Iterable[str] = (),
    policy: EditPolicy,
    extra_sensitive: Iterable[str] = (),
    homes: Iterable[str | PurePath] = (),
    temp_dir: str | None = None,
    wsl: bool | None = None,
) -> EditDecision:
    """Decide whether an edit of ``proposal_path`` may run without asking.

    ``workspace_roots`` are the session's additional directories (the cwd always counts);
    ``homes`` config homes to protect besides the default ones; ``temp_dir`` replaces
    :func:`tempfile.gettempdir` and ``wsl`` the WSL detection (tests). Directories are
    compared exactly after resolution: on a case-insensitive file system a case variant of
    the workspace is asked rather than trusted.
    """
    if policy not in _POLICIES:
        raise ValueError(f"edit policy must be one of {sorted(_POLICIES)}, got {policy!r}")
    try:
        requested = absolute_in_cwd(proposal_path, cwd, wsl=wsl)
        resolved = resolve_in_cwd(proposal_path, cwd, wsl=wsl)
    except ValueError as exc:
        return EditDecision(False, f"cannot resolve the path: {exc}", None)
    roots = _roots(cwd, workspace_roots, temp_dir, wsl)
    sensitive = _protection(resolved, proposal_path, tuple(extra_sensitive), tuple(homes), roots)
    label = next(
        (f"{name} ({root})" for name, root in roots if resolved.is_relative_to(root)), None
    )

    def decided(approve: bool, reason: str) -> EditDecision:
        return EditDecision(approve, reason, resolved, sensitive, requested, label is not None)

    if sensitive is not None:
        return decided(False, f"sensitive path, always asked: {sensitive}")
    if policy == "ask":
        return decided(False, "edits are asked in this mode")
    if policy == "session":
        return decided(True, "edits are allowed for this session")
    if label is not None:
        return decided(True, f"inside {label}")
    return decided(False, "outside the workspace")


def _unread(path: str, cwd: str, wsl: bool | None) -> EditDecision:
    try:
        resolved: Path | None = resolve_in_cwd(path, cwd, wsl=wsl)
    except ValueError:
        resolved = None
    return EditDecision(False, "the exact change could not be read here, always asked", resolved)


def decide_edits(
    proposals: Sequence[EditProposal | str],
    *,
    cwd: str,
    workspace_roots: Iterable[str] = (),
    policy: EditPolicy,
    extra_sensitive: Iterable[str] = (),
    homes: Iterable[str | PurePath] = (),
    temp_dir: str | None = None,
    wsl: bool | None = None,
) -> EditBatchDecision:
    """:func:`decide_edit` for every file of one edit; approved only if all of them are."""
    if not proposals:
        raise ValueError("an edit must name at least one file")
    roots = tuple(workspace_roots)
    extra = tuple(extra_sensitive)
    home_list = tuple(homes)
    decisions = tuple(
        _unread(item.path, cwd, wsl)
        if isinstance(item, EditProposal) and item.must_ask
        else decide_edit(
            item.path if isinstance(item, EditProposal) else item,
            cwd=cwd,
            workspace_roots=roots,
            policy=policy,
            extra_sensitive=extra,
            homes=home_list,
            temp_dir=temp_dir,
            wsl=wsl,
        )
        for item in proposals
    )
    refused = next((d for d in decisions if not d.auto_approve), None)
    if refused is None:
        return EditBatchDecision(True, "every file may be edited without asking", decisions)
    where = refused.resolved_path if refused.resolved_path is not None else "a file"
    return EditBatchDecision(False, f"{where}: {refused.reason}", decisions)
