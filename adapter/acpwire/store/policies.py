"""Persistent "always allow" / "always deny" answers to permission requests, per workspace.

A decision is keyed by the workspace (compared in normalised form, see
:func:`acpwire.config.paths.normalize_for_compare`), its kind (a shell ``command`` or a file
``edit``, an MCP ``tool``) and a key chosen by the permission layer (a command pattern, a path ...). Keys match
exactly; the latest decision for a key replaces the earlier one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, get_args

from acpwire.config.paths import normalize_for_compare
from acpwire.store.db import Database
from acpwire.store.values import format_ts, parse_ts, utcnow

__all__ = ["ApprovalKind", "ApprovalRecord", "ApprovalsMixin", "Decision"]

ApprovalKind = Literal["command", "edit", "tool"]
Decision = Literal["allow", "deny"]
_KINDS: frozenset[str] = frozenset(get_args(ApprovalKind))
_DECISIONS: frozenset[str] = frozenset(get_args(Decision))


@dataclass(frozen=True, slots=True)
class ApprovalRecord:
    workspace: str
    kind: ApprovalKind
    key: str
    decision: Decision
    created_at: datetime


def _check(workspace: str, kind: str, key: str) -> str:
    if kind not in _KINDS:
        raise ValueError(f"approval kind must be one of {sorted(_KINDS)}, got {kind!r}")
    if not key:
        raise ValueError("approval key must be a non-empty string")
    if not workspace:
        raise ValueError("approval workspace must be a non-empty path")
    return normalize_for_compare(workspace)


def _kind(value: str) -> ApprovalKind:
    if value == "command":
        return "command"
    if value == "edit":
        return "edit"
    if value == "tool":
        return "tool"
    raise ValueError(f"stored approval has unknown kind {value!r}")


def _decision(value: str) -> Decision:
    if value == "allow":
        return "allow"
    if value == "deny":
        return "deny"
    raise ValueError(f"stored approval has unknown decision {value!r}")


class ApprovalsMixin(Database):
    """Rows of the ``approvals`` table."""

    def remember_approval(
        self, workspace: str, kind: ApprovalKind, key: str, decision: Decision
    ) -> None:
        workspace_key = _check(workspace, kind, key)
        if decision not in _DECISIONS:
            raise ValueError(
                f"approval decision must be one of {sorted(_DECISIONS)}, got {decision!r}"
            )
        with self._write() as conn:
            conn.execute(
                "INSERT INTO approvals (workspace_key, workspace, kind, key, decision, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (workspace_key, kind, key) DO UPDATE SET "
                "workspace = excluded.workspace, decision = excluded.decision, "
                "created_at = excluded.created_at",
                (workspace_key, workspace, kind, key, decision, format_ts(utcnow())),
            )

    def lookup_approval(self, workspace: str, kind: ApprovalKind, key: str) -> Decision | None:
        workspace_key = _check(workspace, kind, key)
        with self._read() as conn:
            row = conn.execute(
                "SELECT decision FROM approvals WHERE workspace_key = ? AND kind = ? AND key = ?",
                (workspace_key, kind, key),
            ).fetchone()
        return None if row is None else _decision(row[0])

    def list_approvals(self, workspace: str) -> list[ApprovalRecord]:
        """The workspace's remembered decisions, ordered by kind then key."""
        if not workspace:
            raise ValueError("approval workspace must be a non-empty path")
        with self._read() as conn:
            rows = conn.execute(
                "SELECT workspace, kind, key, decision, created_at FROM approvals "
                "WHERE workspace_key = ? ORDER BY kind, key",
                (normalize_for_compare(workspace),),
            ).fetchall()
        return [
            ApprovalRecord(
                workspace=ws,
                kind=_kind(kind),
                key=key,
                decision=_decision(decision),
                created_at=parse_ts(created),
            )
            for ws, kind, key, decision, created in rows
        ]

    def revoke_approval(self, workspace: str, kind: ApprovalKind, key: str) -> bool:
        """Forget a remembered decision; False if there was none."""
        workspace_key = _check(workspace, kind, key)
        with self._write() as conn:
            deleted = conn.execute(
                "DELETE FROM approvals WHERE workspace_key = ? AND kind = ? AND key = ?",
                (workspace_key, kind, key),
            )
            return deleted.rowcount > 0
