"""Session provenance: how the agent's internal session ids relate to the ACP session id.

The ACP session id is the client's stable handle, but context compression can rotate the
agent's internal session id mid-turn. Following Hermes, the backend attaches
``{"hermes": {"sessionProvenance": {...}}}`` as ``_meta`` on session responses and on
``session_info_update`` so a client can follow the chain without reading the database. The
field names and rules match the Hermes adapter, so clients written for it work unchanged.
"""

from __future__ import annotations

import logging
from typing import Literal, NotRequired, Protocol, TypedDict

from acpwire.store.errors import StoreError
from acpwire.store.lineage import COMPRESSION, InternalSessionRecord

__all__ = [
    "MAX_WALK",
    "InternalSessionSource",
    "ProvenanceMeta",
    "SessionProvenance",
    "build_provenance",
    "provenance_meta",
    "sends_provenance",
]

logger = logging.getLogger(__name__)

MAX_WALK = 100
"""Longest parent chain walked; deeper chains are pathological, not worth following."""


class InternalSessionSource(Protocol):
    """What provenance needs from the store (``SessionStore`` satisfies it)."""

    def get_internal_session(self, internal_id: str) -> InternalSessionRecord | None: ...


class SessionProvenance(TypedDict):
    acpSessionId: str
    currentHermesSessionId: str
    rootHermesSessionId: str
    parentHermesSessionId: str | None
    sessionKind: Literal["root", "continuation"]
    compressionDepth: int
    previousHermesSessionId: NotRequired[str]
    reason: NotRequired[Literal["compression"]]
    creatorKind: NotRequired[Literal["compression"]]


class _HermesMeta(TypedDict):
    sessionProvenance: SessionProvenance


class ProvenanceMeta(TypedDict):
    hermes: _HermesMeta


def build_provenance(
    store: InternalSessionSource,
    acp_session_id: str,
    current_internal_id: str,
    previous_internal_id: str | None = None,
) -> SessionProvenance | None:
    """Describe the lineage of ``current_internal_id``; None if it is not recorded.

    ``previous_internal_id`` is the internal id from before the last turn; when it differs
    from the current one the head was rotated, which only compression does.
    """
    try:
        current = store.get_internal_session(current_internal_id)
    except StoreError as exc:
        logger.warning("no provenance for session %s: %s", acp_session_id, exc)
        return None
    if current is None:
        return None
    parent_id = current.parent_internal_id
    root_id = current_internal_id
    depth = 0
    immediate_parent_compressed = False
    seen = {current_internal_id}
    cursor = parent_id
    for step in range(MAX_WALK):
        if not cursor or cursor in seen:
            break
        seen.add(cursor)
        try:
            ancestor = store.get_internal_session(cursor)
        except StoreError as exc:
            logger.warning("provenance walk for session %s stopped: %s", acp_session_id, exc)
            break
        if ancestor is None:
            break
        root_id = cursor
        if ancestor.end_reason == COMPRESSION:
            depth += 1
            immediate_parent_compressed = immediate_parent_compressed or step == 0
        cursor = ancestor.parent_internal_id
    provenance: SessionProvenance = {
        "acpSessionId": acp_session_id,
        "currentHermesSessionId": current_internal_id,
        "rootHermesSessionId": root_id,
        "parentHermesSessionId": parent_id,
        "sessionKind": "continuation" if immediate_parent_compressed else "root",
        "compressionDepth": depth,
    }
    if previous_internal_id:
        provenance["previousHermesSessionId"] = previous_internal_id
        if previous_internal_id != current_internal_id:
            provenance["reason"] = "compression"
            provenance["creatorKind"] = "compression"
    return provenance


def sends_provenance(factory: object) -> bool:
    """Whether sessions of ``factory``'s agent carry ``_meta.hermes.sessionProvenance``:
    the agents whose internal session ids it describes (Hermes, and acpwire's own, which
    keeps the same chain) say so with ``session_provenance = True``; a user's agent does
    not get Hermes' ``_meta`` unless its factory asks for it."""
    return getattr(factory, "session_provenance", False) is True


def provenance_meta(
    store: InternalSessionSource,
    acp_session_id: str,
    current_internal_id: str,
    previous_internal_id: str | None = None,
) -> ProvenanceMeta | None:
    """The ready ``_meta`` payload ``{"hermes": {"sessionProvenance": ...}}``, or None."""
    provenance = build_provenance(store, acp_session_id, current_internal_id, previous_internal_id)
    if provenance is None:
        return None
    return {"hermes": {"sessionProvenance": provenance}}
