"""Which file edits may skip the permission prompt.

The session mode picks an :data:`EditPolicy`. Paths are resolved against the *session* cwd
with every symlink followed (also in the parents of files that do not exist yet), so ``../``,
``~``, Windows forms and links pointing out of the workspace are judged by where the write
really lands. Sensitive files (``.git``, ``.ssh``, ``.env*``, private keys, configured
patterns) are always asked, whatever the policy.
"""

from __future__ import annotations

import fnmatch
import logging
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from types import MappingProxyType
from typing import Final, Literal, get_args

from acpwire.agent.seam import EditProposal
from acpwire.paths import require_absolute_cwd, resolve_in_cwd, translate_cwd

__all__ = [
    "MODE_POLICIES",
    "EditBatchDecision",
    "EditDecision",
    "EditPolicy",
    "decide_edit",
    "decide_edits",
    "is_sensitive",
    "policy_for_mode",
]

_log = logging.getLogger(__name__)

EditPolicy = Literal["ask", "workspace", "session"]
"""``ask``: every edit is asked; ``workspace``: edits inside the workspace (cwd, additional
directories, system temp dir) are not; ``session``: no edit is asked in this session."""

_POLICIES: Final = frozenset(get_args(EditPolicy))

MODE_POLICIES: Final[Mapping[str, EditPolicy]] = MappingProxyType(
    {"default": "ask", "accept_edits": "workspace", "dont_ask": "session", "full_access": "session"}
)

_SENSITIVE_DIRS: Final = frozenset({".git", ".ssh"})
_ENV_NAME: Final = re.compile(r"\.env(?:rc|[._-].*)?")
"""``.env``, ``.env.local``, ``.env-prod``, ``.env_test``, ``.envrc`` (direnv runs it)."""
_KEY_NAME: Final = re.compile(r"id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?(?:[._-].*)?")
"""OpenSSH private keys (``id_ed25519``, ``id_ecdsa_sk``, ``id_rsa.bak``...), not ``.pub``."""
_KEY_SUFFIXES: Final = (".pem", ".key")


def policy_for_mode(mode_id: str) -> EditPolicy:
    """The edit policy of a session mode; an unknown mode asks (the safe choice)."""
    policy = MODE_POLICIES.get(mode_id)
    if policy is None:
        _log.warning("unknown session mode %r: every edit will be asked", mode_id)
        return "ask"
    return policy


def is_sensitive(path: str | PurePath, extra_patterns: Iterable[str] = ()) -> str | None:
    """Why ``path`` is sensitive, or None. Case-insensitive; ``/`` and ``\\`` both separate.

    ``extra_patterns`` are :mod:`fnmatch` globs matched against the file name and against
    the whole path (where ``*`` also matches ``/``), e.g. ``"*.p12"`` or ``"*/secrets/*"``.
    """
    full = str(path).replace("\\", "/").lower()
    parts = [part for part in full.split("/") if part]
    for part in parts:
        if part in _SENSITIVE_DIRS:
            return f"inside a {part} directory"
    name = parts[-1] if parts else ""
    if _ENV_NAME.fullmatch(name):
        return f"environment file ({name})"
    private_key = _KEY_NAME.fullmatch(name) is not None and not name.endswith(".pub")
    if private_key or name.endswith(_KEY_SUFFIXES):
        return f"private key or certificate ({name})"
    for pattern in extra_patterns:
        lowered = pattern.replace("\\", "/").lower()
        if fnmatch.fnmatchcase(name, lowered) or fnmatch.fnmatchcase(full, lowered):
            return f"matches the sensitive pattern {pattern!r}"
    return None


@dataclass(frozen=True, slots=True)
class EditDecision:
    """Whether one file edit is approved without asking, and why."""

    auto_approve: bool
    reason: str
    resolved_path: Path | None
    """Where the write lands (symlinks followed); None when the path cannot be resolved."""
    sensitive: str | None = None


@dataclass(frozen=True, slots=True)
class EditBatchDecision:
    """The decision for a multi-file edit: approved without asking only if every file is."""

    auto_approve: bool
    reason: str
    decisions: tuple[EditDecision, ...]


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


def decide_edit(
    proposal_path: str,
    *,
    cwd: str,
    workspace_roots: Iterable[str] = (),
    policy: EditPolicy,
    extra_sensitive: Iterable[str] = (),
    temp_dir: str | None = None,
    wsl: bool | None = None,
) -> EditDecision:
    """Decide whether an edit of ``proposal_path`` may run without asking.

    ``workspace_roots`` are the session's additional directories (the cwd always counts);
    ``temp_dir`` replaces :func:`tempfile.gettempdir` and ``wsl`` the WSL detection (tests).
    Directories are compared exactly after resolution: on a case-insensitive file system a
    case variant of the workspace is asked rather than trusted.
    """
    if policy not in _POLICIES:
        raise ValueError(f"edit policy must be one of {sorted(_POLICIES)}, got {policy!r}")
    extra = tuple(extra_sensitive)
    try:
        resolved = resolve_in_cwd(proposal_path, cwd, wsl=wsl)
    except ValueError as exc:
        return EditDecision(False, f"cannot resolve the path: {exc}", None)
    # The spelling given matters too: a symlinked .git must not hide behind its target.
    sensitive = is_sensitive(resolved, extra) or is_sensitive(
        translate_cwd(proposal_path, wsl=True), extra
    )
    if sensitive is not None:
        return EditDecision(
            False, f"sensitive path, always asked: {sensitive}", resolved, sensitive
        )
    if policy == "ask":
        return EditDecision(False, "edits are asked in this mode", resolved)
    if policy == "session":
        return EditDecision(True, "edits are allowed for this session", resolved)
    for label, root in _roots(cwd, workspace_roots, temp_dir, wsl):
        if resolved.is_relative_to(root):
            return EditDecision(True, f"inside {label} ({root})", resolved)
    return EditDecision(False, "outside the workspace", resolved)


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
    temp_dir: str | None = None,
    wsl: bool | None = None,
) -> EditBatchDecision:
    """:func:`decide_edit` for every file of one edit; approved only if all of them are."""
    if not proposals:
        raise ValueError("an edit must name at least one file")
    roots = tuple(workspace_roots)
    extra = tuple(extra_sensitive)
    decisions = tuple(
        _unread(item.path, cwd, wsl)
        if isinstance(item, EditProposal) and item.must_ask
        else decide_edit(
            item.path if isinstance(item, EditProposal) else item,
            cwd=cwd,
            workspace_roots=roots,
            policy=policy,
            extra_sensitive=extra,
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
