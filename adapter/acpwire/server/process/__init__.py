"""The backend's process and its start: from the command to a connection's backend.

Which agent is served (:mod:`.choice`), the ``initialize`` answer before the event loop
starts (:mod:`.first_answer`), a connection's staged start (:mod:`.front_desk`: the
session machinery loads once ``initialize`` is answered), signals (:mod:`.signals`), the
helper threads let finish at exit (:mod:`.shutdown`) and pydantic's plugin discovery read
without ``importlib.metadata`` (:mod:`.pydantic_plugins`). May import:
:mod:`acpwire.server.methods` and below, inside functions or for types only where it
would load more than the answer needs.
"""

__all__ = ["choice", "first_answer", "front_desk", "pydantic_plugins", "shutdown", "signals"]
