"""The session manager: open sessions in memory, backed by the SQLite store.

Thread-safe (called from the event loop through worker threads, since agent creation
and database access block). Any method naming a session that is not in memory restores
it from the database, rebuilding its agent; an id known to neither is ``None``, never a
silently created session. The sessions in memory, and unloading the idle ones, are
:class:`~.resident.OpenSessions`, mixed in.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections import OrderedDict
from typing import TYPE_CHECKING

from acpwire.agent.factory import AgentFactory
from acpwire.server.sessions.lazy_agent import LazyAgent
from acpwire.server.sessions.provenance import InternalSessionSource
from acpwire.server.sessions.resident import MAX_OPEN_SESSIONS, OpenSessions
from acpwire.server.sessions.state import DEFAULT_MODE, SessionState
from acpwire.store import NOT_RUN_STOPPED, UNSET, SessionRecord, SessionStore, Unset
from acpwire.store.catalog import ForeignSession, SessionCatalog

if TYPE_CHECKING:
    from acpwire.agent.seam import Message, SyncAgent

__all__ = ["MAX_OPEN_SESSIONS", "SessionManager"]

logger = logging.getLogger(__name__)


class SessionManager(OpenSessions):
    """Create, get, fork, list, update and remove sessions."""

    def __init__(
        self,
        store: SessionStore,
        factory: AgentFactory,
        *,
        store_problem: str | None = None,
        catalog: SessionCatalog | None = None,
    ):
        self.store = store
        self.factory = factory
        self.catalog = catalog
        """The agent's own session database kept in step (Hermes' state.db), or None."""
        self.store_problem = store_problem
        """Why sessions are not being persisted (the database could not be opened), or None."""
        self.store_warning: str | None = None
        """What a background integrity check found wrong with the database, or None."""
        self._open: OrderedDict[str, SessionState] = OrderedDict()  # least recently used first
        self.max_open = MAX_OPEN_SESSIONS
        self._lock = threading.RLock()

    @property
    def lineage(self) -> InternalSessionSource:
        """Where provenance reads the internal session chain: the agent's own database
        when it has one (it records compression itself), else acpwire's."""
        return self.catalog if self.catalog is not None else self.store

    def _tell(self, event: str, *args: object) -> None:
        """Notify the catalog; its failures never fail the session (logged)."""
        if self.catalog is None:
            return
        try:
            getattr(self.catalog, event)(*args)
        except Exception:
            logger.warning("agent session database: %s failed", event, exc_info=True)

    def _adopt(self, foreign: ForeignSession) -> SessionRecord:
        """Copy a session of the agent's database into acpwire's (its first use here)."""
        record = self.store.create_session(foreign.record)
        if foreign.transcript:
            # Not touched: the session keeps the agent database's update time.
            self.store.append_messages(record.id, foreign.transcript, touch=False)
            if foreign.history != foreign.transcript:
                self.store.replace_live_history(record.id, foreign.history)
        internal = record.internal_id or record.id
        if self.store.get_internal_session(internal) is None:
            self.store.record_internal_session(internal, record.id, None, "adopted")
        logger.info("adopted session %s from the agent's database", record.id)
        return self.store.get_session(record.id) or record

    def _register(
        self, record: SessionRecord, agent: SyncAgent, history: list[Message]
    ) -> SessionState:
        state = SessionState(record=record, agent=agent, history=history)
        state.reasoning_effort = str(record.config_options.get("reasoning_effort", "default"))
        agent.set_reasoning_effort(
            None if state.reasoning_effort == "default" else state.reasoning_effort
        )
        with self._lock:
            self._open[record.id] = state
        return state

    def _record_lineage(
        self, record: SessionRecord, agent: SyncAgent, parent: str | None, reason: str
    ) -> SessionRecord:
        internal = agent.internal_session_id
        if self.store.get_internal_session(internal) is None:
            self.store.record_internal_session(internal, record.id, parent, reason)
        return self.store.update_session(record.id, internal_id=internal, touch=False)

    def create(self, cwd: str, model: str | None = None) -> SessionState:
        session_id = str(uuid.uuid4())
        agent: SyncAgent
        planned = self.factory.planned_model(model)
        if planned is None:
            agent = self.factory.create(session_id, cwd, model)
        else:  # built on first real use (the usage report sent right after the answer)
            internal_id = str(uuid.uuid4())
            agent = LazyAgent(
                lambda chosen: self.factory.create(session_id, cwd, chosen, internal_id),
                model=planned,
                internal_id=internal_id,
            )
        record = self.store.create_session(
            SessionRecord(id=session_id, cwd=cwd, model=agent.model, mode=DEFAULT_MODE)
        )
        record = self._record_lineage(record, agent, None, "new")
        self._tell("session_created", record, agent)
        logger.info("created session %s in %s (model %s)", session_id, cwd, agent.model)
        return self._register(record, agent, [])

    def get(self, session_id: str) -> SessionState | None:
        """The open session, restored from the database when needed."""
        with self._lock:
            state = self.peek(session_id)
            if state is not None:
                return state
            record = self.store.get_session(session_id)
            if record is None and self.catalog is not None:
                try:
                    foreign = self.catalog.foreign_session(session_id)
                except Exception:
                    logger.warning("reading the agent's session database failed", exc_info=True)
                    foreign = None
                record = None if foreign is None else self._adopt(foreign)
            if record is None:
                return None
            # Prompts a previous process accepted and never ran: shown as not run.
            self.store.settle_pending_prompts(session_id, NOT_RUN_STOPPED)
            history = self.store.live_history(session_id)
            cwd = record.cwd
            agent: SyncAgent
            if record.internal_id is None:
                agent = self.factory.create(session_id, cwd, record.model)
                record = self._record_lineage(record, agent, None, "restored")
            else:  # built when it is first asked to work (a prompt), not to replay
                internal_id = record.internal_id
                agent = LazyAgent(
                    lambda model: self.factory.create(session_id, cwd, model, internal_id),
                    model=record.model,
                    internal_id=internal_id,
                )
            logger.info(
                "restored session %s from the database (%d messages)", session_id, len(history)
            )
            return self._register(record, agent, history)

    def fork(self, source_id: str, cwd: str) -> SessionState | None:
        source = self.get(source_id)
        if source is None:
            return None
        new_id = str(uuid.uuid4())
        self.store.replace_live_history(source_id, source.history)
        record = self.store.fork_session(source_id, new_id, cwd)
        agent = self.factory.create(new_id, cwd, record.model)
        record = self._record_lineage(record, agent, source.record.internal_id, "fork")
        history = self.store.live_history(new_id)
        self._tell("session_created", record, agent)
        self._tell("session_saved", record, agent, history)
        return self._register(record, agent, history)

    def update(
        self,
        state: SessionState,
        *,
        cwd: str | Unset = UNSET,
        title: str | Unset = UNSET,
        title_is_explicit: bool | Unset = UNSET,
        model: str | Unset = UNSET,
        mode: str | Unset = UNSET,
        config_options: dict[str, object] | Unset = UNSET,
    ) -> None:
        """Persist changed settings and keep the in-memory record in step."""
        state.record = self.store.update_session(
            state.id,
            cwd=cwd,
            title=title,
            title_is_explicit=title_is_explicit,
            model=model,
            mode=mode,
            config_options=config_options,
        )
        if cwd is not UNSET or model is not UNSET or title is not UNSET:
            self._tell("session_saved", state.record, state.agent, None)

    def append_messages(self, state: SessionState, messages: list[Message]) -> None:
        self.store.append_messages(state.id, messages)

    def clear_history(self, state: SessionState) -> None:
        """``/reset``: an empty live history; the replayed transcript starts afresh."""
        state.history = []
        self.store.clear_history(state.id)

    def transcript(self, state: SessionState) -> list[Message]:
        """What ``session/load`` replays: the conversation since the last reset, compacted
        parts included (the live history may hold only a summary of them)."""
        return self.store.transcript(state.id)

    def save_history(self, state: SessionState, history: list[Message]) -> None:
        """Replace the live history (rows that dropped out are archived, never deleted);
        the session's copy follows only once the database has it."""
        self.store.replace_live_history(state.id, history, touch=True)
        state.history = history
        self._tell("session_saved", state.record, state.agent, history)

    def rotate_internal(self, state: SessionState, new_id: str, reason: str) -> str | None:
        """Record that the agent's internal id moved; returns the previous one."""
        previous = state.record.internal_id
        if previous == new_id:
            return previous
        if self.store.get_internal_session(new_id) is None:
            self.store.record_internal_session(new_id, state.id, previous, reason)
        state.record = self.store.update_session(state.id, internal_id=new_id, touch=False)
        return previous

    def list_sessions(
        self, cwd: str | None, cursor: str | None, limit: int
    ) -> tuple[list[SessionRecord], str | None]:
        """What ``session/list`` shows: sessions that have a conversation (as hermes-acp, a
        thread opened and left empty is not listed; it can still be loaded by id).
        With a catalog, its sessions acpwire has not seen yet are adopted first."""
        if self.catalog is not None:
            with self._lock:
                try:
                    for foreign in self.catalog.foreign_sessions(
                        lambda sid: self.store.get_session(sid) is not None
                    ):
                        self._adopt(foreign)
                except Exception:
                    logger.warning("listing the agent's session database failed", exc_info=True)
        return self.store.list_sessions(cwd=cwd, cursor=cursor, limit=limit, with_history=True)

    def delete(self, session_id: str) -> bool:
        self.close(session_id)
        deleted = self.store.delete_session(session_id)
        if deleted:
            self._tell("session_deleted", session_id)
        return deleted
