"""The sessions of the backend: open in memory, backed by the store, restored on demand.

The manager (:mod:`.manager`, with the least recently used sessions it holds in
:mod:`.resident`), a session's runtime state (:mod:`.state`), the agent built on first
real use of a restored session (:mod:`.lazy_agent`), a session's modes and config
options (:mod:`.options`) and its provenance, sent to the client as ``_meta``
(:mod:`.provenance`). May import: the agent seam, the store, ``acpwire.rpc``'s
errors and what lies below them; nothing of the rest of :mod:`acpwire.server`.
"""

__all__ = ["lazy_agent", "manager", "options", "resident", "state"]
