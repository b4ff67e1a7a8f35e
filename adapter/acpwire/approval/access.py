"""Reads and MCP tool calls in Default mode: which ones are asked, and what a grant covers.

A read is asked when its resolved target lies outside the workspace (session cwd, temp
dir) or is protected (:mod:`acpwire.approval.protected`); once allowed, the same file is
not asked again in that session. An MCP tool call is asked unless the user allowed that
tool in this workspace ("always allow this tool", kept in the approvals store with kind
``tool``) or for this session. Other modes ask neither, except an agent's tool call
marked ``every_mode`` (one that may reach beyond the workspace), asked in every mode but
Full Access.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from pathlib import PurePath
from typing import Literal, Protocol

from acpwire.approval.memory import StoredApproval
from acpwire.approval.permissions import Decision
from acpwire.approval.policy import workspace_root_of
from acpwire.approval.protected import protected_reason
from acpwire.config.paths import resolve_in_cwd

__all__ = ["ASKING_MODES", "EVERY_MODE_EXCEPT", "AccessMemory", "ToolStore", "read_reason"]

_log = logging.getLogger(__name__)
_TOOL: Literal["tool"] = "tool"

ASKING_MODES = frozenset({"default"})
"""The session modes in which reads and MCP tool calls may be asked."""
EVERY_MODE_EXCEPT = "full_access"
"""The one mode in which a tool call asked "in every mode" is not asked."""


def read_reason(
    path: str,
    *,
    cwd: str,
    extra_sensitive: Iterable[str] = (),
    homes: Iterable[str | PurePath] = (),
    temp_dir: str | None = None,
) -> tuple[str, str | None]:
    """The resolved target of a read of ``path`` and why it is asked (None: not asked)."""
    try:
        resolved = resolve_in_cwd(path, cwd)
    except ValueError as exc:
        return path, f"cannot resolve the path: {exc}"
    root = workspace_root_of(resolved, cwd, temp_dir=temp_dir)
    protected = protected_reason(resolved, extra_sensitive, homes=homes, workspaces=[])
    if protected is not None:
        return str(resolved), f"protected: {protected}"
    if root is None:
        return str(resolved), "outside the workspace"
    return str(resolved), None


class ToolStore(Protocol):
    """The persistence :class:`AccessMemory` needs (``acpwire.store.SessionStore`` has it)."""

    def remember_approval(
        self, workspace: str, kind: Literal["tool"], key: str, decision: Literal["allow"]
    ) -> None: ...
    def lookup_approval(self, workspace: str, kind: Literal["tool"], key: str) -> str | None: ...
    def list_approvals(self, workspace: str) -> Sequence[StoredApproval]: ...
    def revoke_approval(self, workspace: str, kind: Literal["tool"], key: str) -> bool: ...


class AccessMemory:
    """The reads and tool calls one session was allowed (thread-safe)."""

    def __init__(self, store: ToolStore | None = None) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._reads: set[str] = set()
        self._tools: set[str] = set()

    @property
    def holds_session_state(self) -> bool:
        """Whether it holds grants of this session only (lost if the session is unloaded)."""
        with self._lock:
            return bool(self._reads or self._tools)

    def read_allowed(self, resolved: str) -> bool:
        with self._lock:
            return resolved in self._reads

    def allow_read(self, resolved: str) -> None:
        """Any allow of a read covers that file for the rest of the session."""
        with self._lock:
            self._reads.add(resolved)

    def tool_allowed(self, workspace: str, name: str) -> bool:
        with self._lock:
            if name in self._tools:
                return True
        if self._store is None:
            return False
        try:
            return self._store.lookup_approval(workspace, _TOOL, name) == "allow"
        except Exception:
            _log.exception("tool approval lookup failed for %r; the user will be asked", name)
            return False

    def record_tool(self, workspace: str, name: str, decision: Decision) -> None:
        """``always``: this tool in this workspace (this session when nothing persists)."""
        if decision != "always":
            return
        if self._store is not None:
            try:
                self._store.remember_approval(workspace, _TOOL, name, "allow")
            except Exception:
                _log.exception("could not persist the tool grant %r; kept for this session", name)
            else:
                return
        with self._lock:
            self._tools.add(name)

    def allowed_tools(self, workspace: str) -> list[str]:
        """The tools always allowed in ``workspace`` (and for this session)."""
        stored = [] if self._store is None else self._store.list_approvals(workspace)
        with self._lock:
            session = sorted(self._tools)
        return sorted({r.key for r in stored if r.kind == _TOOL} | set(session))

    def revoke_tool(self, workspace: str, name: str) -> bool:
        with self._lock:
            removed = name in self._tools
            self._tools.discard(name)
        if self._store is not None:
            removed = self._store.revoke_approval(workspace, _TOOL, name) or removed
        return removed

    def clear_session(self) -> None:
        """Drop the session's read and tool grants (the workspace's stay with it)."""
        with self._lock:
            self._reads.clear()
            self._tools.clear()
