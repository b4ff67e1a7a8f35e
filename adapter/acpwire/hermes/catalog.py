""":class:`HermesCatalog`: Hermes' ``$HERMES_HOME/state.db`` as the store of record of
the sessions acpwire serves with Hermes, through Hermes' own ``hermes_state.SessionDB``.

Rows are written as ``hermes-acp`` writes its sessions: ``source = "acp"``, the ACP
session id as the row id, the model, and ``model_config`` holding cwd, provider, base URL
and API mode. The messages are Hermes' own business: every ``AIAgent`` gets this
database, appends each message as it happens and rotates its session when it compresses
(ending the old row with ``end_reason = "compression"``). This side writes a session's
messages only when the agent has not (a fork's copied history), and then never deletes
archived (compacted) rows. Sessions ``hermes-acp`` made are adopted by acpwire on first
sight (:meth:`HermesCatalog.foreign_sessions`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from acpwire.hermes.agent import HermesAgent
from acpwire.hermes.modules import hermes_module
from acpwire.hermes.summaries import summary_meta
from acpwire.store.catalog import ForeignSession
from acpwire.store.history import Message
from acpwire.store.lineage import InternalSessionRecord
from acpwire.store.sessions import SessionRecord

__all__ = ["SOURCE", "HermesCatalog", "hermes_agent_of", "open_state_db"]

logger = logging.getLogger(__name__)

SOURCE = "acp"
"""The ``sessions.source`` of ACP sessions in state.db (hermes-acp's value)."""
_LIST_LIMIT = 1000


def hermes_agent_of(agent: object) -> HermesAgent | None:
    """The :class:`HermesAgent` behind a session's agent, if it is built (a lazily
    built agent is not built for this)."""
    if isinstance(agent, HermesAgent):
        return agent
    if getattr(agent, "built", False):
        real = getattr(agent, "real", None)
        if callable(real):
            return hermes_agent_of(real())
    return None


def _moment(value: object) -> datetime | None:
    if isinstance(value, int | float):
        return datetime.fromtimestamp(float(value), tz=UTC)
    return None


def _config_of(row: Mapping[str, Any]) -> dict[str, Any]:
    try:
        loaded = json.loads(row.get("model_config") or "{}")
    except (TypeError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


class HermesCatalog:
    """The :class:`~acpwire.store.catalog.SessionCatalog` over Hermes' ``SessionDB``.

    ``open_db`` opens the database (Hermes' WAL, busy timeout and short write
    transactions with retries make it safe beside the Hermes CLI); it is called once,
    on first use, and the same object is handed to every ``AIAgent`` (:meth:`db`).
    """

    def __init__(self, open_db: Callable[[], Any]) -> None:
        self._open_db = open_db
        self._db: Any = None
        self._lock = threading.Lock()

    def db(self) -> Any:
        with self._lock:
            if self._db is None:
                self._db = self._open_db()
            return self._db

    def resume(self, internal_id: str) -> None:
        """A restored session goes on in ``internal_id``: reopen it if Hermes closed it
        with its agent (``agent_close``, at acpwire's exit); a compressed one stays."""
        with contextlib.suppress(Exception):
            row = self.db().get_session(internal_id)
            if row is not None and row.get("end_reason") == "agent_close":
                self.db().reopen_session(internal_id)

    # -- lineage (provenance) ------------------------------------------------------

    def get_internal_session(self, internal_id: str) -> InternalSessionRecord | None:
        row = self.db().get_session(internal_id)
        if row is None:
            return None
        parent = row.get("parent_session_id") or None
        started = _moment(row.get("started_at")) or datetime.now(UTC)
        return InternalSessionRecord(
            internal_id=internal_id,
            acp_session_id=internal_id,
            parent_internal_id=parent,
            created_reason="continuation" if parent else "new",
            end_reason=row.get("end_reason") or None,
            created_at=started,
            ended_at=_moment(row.get("ended_at")),
        )

    # -- acpwire's sessions --------------------------------------------------------

    @staticmethod
    def _facts(record: SessionRecord, agent: object) -> tuple[dict[str, str], str | None]:
        """``model_config`` (cwd and the provider snapshot) and the model, as hermes-acp
        stores them."""
        meta = {"cwd": record.cwd}
        hermes = hermes_agent_of(agent)
        model = record.model
        if hermes is not None:
            meta.update({k: v for k, v in hermes.runtime_facts().items() if v})
            model = hermes.model or model
        return meta, model

    def session_created(self, record: SessionRecord, agent: object) -> None:
        meta, model = self._facts(record, agent)
        self.db().create_session(
            session_id=record.id, source=SOURCE, model=model, model_config=meta, cwd=record.cwd
        )

    def session_saved(
        self, record: SessionRecord, agent: object, history: list[Message] | None
    ) -> None:
        db = self.db()
        if db.get_session(record.id) is None:
            self.session_created(record, agent)
        else:
            meta, model = self._facts(record, agent)
            db.update_session_meta(record.id, json.dumps(meta), model)
        if record.title and record.title_is_explicit:  # first-prompt titles stay here
            with contextlib.suppress(Exception):  # a title Hermes refuses, or one in use
                db.set_session_title(record.id, record.title)
        hermes = hermes_agent_of(agent)
        if history is None or (hermes is not None and hermes.persists_to(db)):
            return  # the agent appends its messages itself (and archives compacted ones)
        internal = record.internal_id or record.id
        if db.get_session(internal) is None:
            return
        # Only the live rows are replaced once archived ones exist: replacing the whole
        # set would delete the turns compression archived.
        db.replace_messages(
            internal, _clean(history), active_only=db.has_archived_messages(internal)
        )

    def session_deleted(self, session_id: str) -> None:
        db = self.db()
        row = db.get_session(session_id)
        if row is not None and row.get("source") == SOURCE:
            db.delete_session(session_id)

    def replay_meta(self, message: Message, text: str) -> dict[str, Any] | None:
        return summary_meta(message, text)

    # -- sessions of hermes-acp ----------------------------------------------------

    def _foreign(self, row: Mapping[str, Any]) -> ForeignSession | None:
        db = self.db()
        session_id = str(row["id"])
        cwd = str(_config_of(row).get("cwd") or row.get("cwd") or "")
        if not cwd.startswith("/"):
            return None  # acpwire sessions need an absolute cwd
        tip = db.get_compression_tip(session_id) or session_id
        history = db.get_messages_as_conversation(tip, repair_alternation=True)
        transcript = history
        if tip != session_id:
            transcript = db.get_messages_as_conversation(tip, include_ancestors=True)
        started = _moment(row.get("started_at")) or datetime.now(UTC)
        stamps = [_moment(m.get("timestamp")) for m in history]
        updated = _moment(row.get("last_active")) or max(
            (s for s in stamps if s is not None), default=started
        )
        title = row.get("title") or db.get_session_title(tip) or row.get("preview")
        if not title:
            title = next((m["content"] for m in history if _user_text(m)), None)
        record = SessionRecord(
            id=session_id,
            cwd=cwd,
            title=str(title).strip() if title else None,
            title_is_explicit=bool(row.get("title")),
            model=row.get("model") or None,
            internal_id=tip,
            created_at=started,
            updated_at=max(updated, started),
        )
        return ForeignSession(record=record, transcript=_clean(transcript), history=_clean(history))

    def foreign_session(self, session_id: str) -> ForeignSession | None:
        row = self.db().get_session(session_id)
        if row is None or row.get("source") != SOURCE:
            return None
        return self._foreign(row)

    def foreign_sessions(self, known: Callable[[str], bool]) -> Iterator[ForeignSession]:
        rows = self.db().list_sessions_rich(
            source=SOURCE, limit=_LIST_LIMIT, project_compression_tips=False
        )
        for row in rows:
            if int(row.get("message_count") or 0) <= 0 or known(str(row["id"])):
                continue
            foreign = self._foreign(row)
            if foreign is not None:
                yield foreign


def _user_text(message: Message) -> bool:
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, str) and bool(content.strip())


def _clean(messages: list[Message]) -> list[Message]:
    """Messages without Hermes' in-process bookkeeping keys (``_db_persisted``)."""
    return [{k: v for k, v in m.items() if k != "_db_persisted"} for m in messages]


def open_state_db() -> Any:
    """Hermes' ``SessionDB`` at ``$HERMES_HOME/state.db`` (resolved now, as hermes-acp)."""
    state = hermes_module("hermes_state")
    constants = hermes_module("hermes_constants")
    if state is None or constants is None:
        raise RuntimeError("hermes-agent is not importable here")
    return state.SessionDB(db_path=constants.get_hermes_home() / "state.db")
