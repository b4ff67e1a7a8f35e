"""The agent side of ACP: every method the editor calls, on the generated types.

:mod:`.backend` (the sessions by id, provider checks, blocking work, and the methods
themselves), :mod:`.lifecycle` (``initialize``, ``authenticate``, ``logout``) and
:mod:`.advertised` (what ``initialize`` says, built synchronously for the early answer).
May import: :mod:`acpwire.server.turns`, :mod:`acpwire.server.editor`,
:mod:`acpwire.server.sessions` and below; the turns load on first use.
"""

__all__ = ["advertised", "backend", "lifecycle"]
