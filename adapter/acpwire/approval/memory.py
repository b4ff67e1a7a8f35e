"""Remembered approval answers: per-session grants in memory, per-workspace ones in a store.

Each session owns one :class:`ApprovalMemory`, so a session never sees another's "allow for
this session" grants. "Always" answers go to an injected :class:`ApprovalStore` (the
backend's ``SessionStore`` fits it) keyed by workspace, kind ``"command"`` and the
exact command (:func:`command_key`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from acpwire.approval.permissions import Decision
from acpwire.approval.policy import EditPolicy

__all__ = [
    "ApprovalMemory",
    "ApprovalStore",
    "CommandVerdict",
    "PersistentDecision",
    "RecordScope",
    "StoredApproval",
    "command_key",
]

_log = logging.getLogger(__name__)

ApprovalKind = Literal["command", "edit"]
StoredDecision = Literal["allow", "deny"]
CommandVerdict = Literal["allow", "deny"]
RecordScope = Literal["none", "session", "persistent"]
_COMMAND: ApprovalKind = "command"


class StoredApproval(Protocol):
    """One remembered decision as the store lists it."""

    @property
    def kind(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def decision(self) -> str: ...


class ApprovalStore(Protocol):
    """The persistence :class:`ApprovalMemory` needs (``acpwire.store.SessionStore`` has it)."""

    def remember_approval(
        self, workspace: str, kind: ApprovalKind, key: str, decision: StoredDecision
    ) -> None: ...
    def lookup_approval(
        self, workspace: str, kind: ApprovalKind, key: str
    ) -> StoredDecision | None: ...
    def list_approvals(self, workspace: str) -> Sequence[StoredApproval]: ...
    def revoke_approval(self, workspace: str, kind: ApprovalKind, key: str) -> bool: ...


@dataclass(frozen=True, slots=True)
class PersistentDecision:
    """A remembered per-workspace decision about one command."""

    key: str
    decision: StoredDecision


def command_key(command: str) -> str:
    """The key a command is remembered under: the exact command text.

    Nothing is normalised: a run of spaces, a tab or a carriage return can change what
    the shell runs (inside a here-document, after a backslash, in a delimiter), so two
    commands share a key only when they are the same text. (Keys written before version
    3 of the database collapsed whitespace; its migration dropped their "allow" rows.)
    """
    if not command.strip():
        raise ValueError("command must not be empty")
    return command


class ApprovalMemory:
    """Approval answers of one session (thread-safe: turns run in worker threads)."""

    def __init__(self, store: ApprovalStore | None = None) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._session_allowed: set[str] = set()
        self._session_denied: set[str] = set()
        self._edits_allowed = False

    @property
    def holds_session_state(self) -> bool:
        """Whether it holds grants of this session only (lost if the session is unloaded)."""
        with self._lock:
            return bool(self._session_allowed or self._session_denied or self._edits_allowed)

    def check_command(self, workspace: str, command: str) -> CommandVerdict | None:
        """A remembered verdict for ``command``, or None when the user must be asked.

        A persistent "deny" wins over any grant; a failing store means "ask".
        """
        key = command_key(command)
        stored: StoredDecision | None = None
        if self._store is not None:
            try:
                stored = self._store.lookup_approval(workspace, _COMMAND, key)
            except Exception:
                _log.exception("approval lookup failed for %r; the user will be asked", key)
        with self._lock:
            if stored == "deny" or key in self._session_denied:
                return "deny"
            if stored == "allow" or key in self._session_allowed:
                return "allow"
        return None

    def record(self, workspace: str, command: str, decision: Decision) -> RecordScope:
        """Remember the answer ``decision`` to ``command``; returns where it was kept.

        ``session`` → this session only; ``always``/``deny_always`` → the workspace (or this
        session, logged, when there is no store or it fails); anything else is not kept.
        """
        key = command_key(command)
        if decision == "session":
            with self._lock:
                self._session_allowed.add(key)
                self._session_denied.discard(key)
            return "session"
        if decision not in ("always", "deny_always"):
            return "none"
        verdict: StoredDecision = "allow" if decision == "always" else "deny"
        if self._store is not None:
            try:
                self._store.remember_approval(workspace, _COMMAND, key, verdict)
            except Exception:
                _log.exception("could not persist %s for %r; kept for this session", verdict, key)
            else:
                return "persistent"
        else:
            _log.warning("no approval store: %s for %r kept for this session only", verdict, key)
        with self._lock:
            (self._session_allowed if verdict == "allow" else self._session_denied).add(key)
            (self._session_denied if verdict == "allow" else self._session_allowed).discard(key)
        return "session"

    def list_persistent(self, workspace: str) -> list[PersistentDecision]:
        """The workspace's remembered command decisions, as the store orders them."""
        if self._store is None:
            return []
        return [
            PersistentDecision(record.key, "allow" if record.decision == "allow" else "deny")
            for record in self._store.list_approvals(workspace)
            if record.kind == _COMMAND
        ]

    def revoke(self, workspace: str, key: str) -> bool:
        """Forget ``key`` in the workspace and in this session; False if nothing was kept."""
        normal = command_key(key)
        with self._lock:
            removed = normal in self._session_allowed or normal in self._session_denied
            self._session_allowed.discard(normal)
            self._session_denied.discard(normal)
        if self._store is not None:
            removed = self._store.revoke_approval(workspace, _COMMAND, normal) or removed
        return removed

    def allow_edits_for_session(self) -> None:
        """The user chose "Allow edits for this session"."""
        with self._lock:
            self._edits_allowed = True

    def record_edit(self, decision: Decision) -> RecordScope:
        """Remember the answer to an edit request: only ``session`` is kept."""
        if decision != "session":
            return "none"
        self.allow_edits_for_session()
        return "session"

    @property
    def edits_allowed_for_session(self) -> bool:
        with self._lock:
            return self._edits_allowed

    def edit_policy(self, mode_policy: EditPolicy) -> EditPolicy:
        """The policy in force: once edits were allowed for this session, at least
        ``workspace`` (the grant covers workspace files only, never edits anywhere).

        Protected paths stay asked under every policy (see ``decide_edit``).
        """
        if self.edits_allowed_for_session and mode_policy == "ask":
            return "workspace"
        return mode_policy

    def clear_session(self) -> None:
        """Drop every grant of this session (persistent decisions stay)."""
        with self._lock:
            self._session_allowed.clear()
            self._session_denied.clear()
            self._edits_allowed = False
