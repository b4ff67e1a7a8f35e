"""The :class:`SessionStore`: one SQLite file holding sessions, messages, queued prompts,
lineage and approvals."""

from __future__ import annotations

from acpwire.store.lineage import LineageMixin
from acpwire.store.pending import PendingMixin
from acpwire.store.policies import ApprovalsMixin
from acpwire.store.sessions import SessionsMixin

__all__ = ["SessionStore"]


class SessionStore(SessionsMixin, PendingMixin, LineageMixin, ApprovalsMixin):
    """Thread-safe persistent store for the ACP backend.

    ``SessionStore(path)`` opens (creating or migrating) the database at ``path``;
    ``SessionStore(":memory:")`` keeps everything in memory. Opening raises
    :class:`~acpwire.store.errors.StoreCorruptError` for a damaged file,
    :class:`~acpwire.store.errors.StoreBusyError` when another connection holds the lock past
    ``busy_timeout_ms``; :func:`~acpwire.store.opening.open_session_store` applies a recovery
    policy instead. Every method commits before it returns.
    """
