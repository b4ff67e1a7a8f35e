"""The seam to a second store of record the server keeps in step with its own.

The embedded agent has none: acpwire's :class:`~acpwire.store.SessionStore` is its only
history. An agent with a session database of its own (Hermes' ``state.db``) supplies a
:class:`SessionCatalog`: the server tells it about sessions it creates, saves and deletes,
adopts the sessions it lists that acpwire has never seen, and reads the lineage of the
agent's internal session ids from it (for provenance). acpwire's database keeps what
only ACP knows (modes, config options, the replay transcript, approvals), keyed by the
same session id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from acpwire.store.history import Message
from acpwire.store.lineage import InternalSessionRecord
from acpwire.store.sessions import SessionRecord

__all__ = ["ForeignSession", "SessionCatalog"]


@dataclass(frozen=True, slots=True)
class ForeignSession:
    """A session the catalog holds that acpwire's database does not (yet).

    ``transcript`` is the whole conversation in order (compacted parts included);
    ``history`` the live part the agent resumes from (a tail of it, or equal to it).
    ``record.internal_id`` names the agent's current internal session.
    """

    record: SessionRecord
    transcript: list[Message]
    history: list[Message]


class SessionCatalog(Protocol):
    """What the session manager asks of an agent's own session database.

    ``agent`` is the session's agent object as the factory built it; implementations
    read what they need from it and ignore agents they do not know. The notifications
    never raise: a failure is logged and the session goes on in acpwire's database.
    """

    def get_internal_session(self, internal_id: str) -> InternalSessionRecord | None:
        """The lineage row of an internal session id (provenance walks these)."""
        ...

    def session_created(self, record: SessionRecord, agent: object) -> None:
        """A session was created (or forked) by acpwire."""
        ...

    def session_saved(
        self, record: SessionRecord, agent: object, history: list[Message] | None
    ) -> None:
        """Settings changed, or (``history``) a turn or command saved the live history."""
        ...

    def session_deleted(self, session_id: str) -> None: ...

    def foreign_session(self, session_id: str) -> ForeignSession | None:
        """A session acpwire may adopt under ``session_id``, or None."""
        ...

    def foreign_sessions(self, known: Callable[[str], bool]) -> Iterator[ForeignSession]:
        """Every adoptable session whose id ``known`` does not recognise."""
        ...

    def replay_meta(self, message: Message, text: str) -> dict[str, Any] | None:
        """``_meta`` for the replayed chunk of a stored message (the agent's own marks,
        e.g. of a compaction summary), or None."""
        ...
