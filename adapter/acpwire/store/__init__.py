"""Persistence for the ACP backend: sessions, message history, lineage and approvals in SQLite.

Works on plain Python data (chat messages are OpenAI-style dicts); knows nothing of ACP.
"""

from acpwire.store.catalog import ForeignSession, SessionCatalog
from acpwire.store.db import MEMORY
from acpwire.store.errors import (
    SessionExistsError,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    StoreVersionError,
    UnknownSessionError,
)
from acpwire.store.history import HistoryChange, Message, StoredMessage
from acpwire.store.lineage import COMPRESSION, InternalSessionRecord
from acpwire.store.opening import (
    DEFAULT_FILENAME,
    RecoveryPolicy,
    move_corrupt_aside,
    open_session_store,
)
from acpwire.store.pending import NOT_RUN_CANCELLED, NOT_RUN_STOPPED, PendingPrompt
from acpwire.store.policies import ApprovalKind, ApprovalRecord, Decision
from acpwire.store.schema import SCHEMA_VERSION, migrate
from acpwire.store.session_store import SessionStore
from acpwire.store.sessions import MAX_PAGE, UNSET, JsonObject, SessionRecord, Unset

__all__ = [
    "COMPRESSION",
    "DEFAULT_FILENAME",
    "MAX_PAGE",
    "MEMORY",
    "NOT_RUN_CANCELLED",
    "NOT_RUN_STOPPED",
    "SCHEMA_VERSION",
    "UNSET",
    "ApprovalKind",
    "ApprovalRecord",
    "Decision",
    "ForeignSession",
    "HistoryChange",
    "InternalSessionRecord",
    "JsonObject",
    "Message",
    "PendingPrompt",
    "RecoveryPolicy",
    "SessionCatalog",
    "SessionExistsError",
    "SessionRecord",
    "SessionStore",
    "StoreBusyError",
    "StoreCorruptError",
    "StoreError",
    "StoreVersionError",
    "StoredMessage",
    "UnknownSessionError",
    "Unset",
    "migrate",
    "move_corrupt_aside",
    "open_session_store",
]
