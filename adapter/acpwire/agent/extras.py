"""What an agent factory may offer beyond :class:`~acpwire.agent.factory.AgentFactory`.

The server looks for these attributes and does without them (the embedded agent has
none); Hermes' factory (:mod:`acpwire.hermes.factory`) has them all:

- ``agent_identity() -> (name, version)``: the agent served, named in ``agentInfo``
  and ``/version`` beside acpwire;
- ``setup_method``: a :class:`SetupMethod`, the terminal auth method offered instead
  of acpwire's ``--setup``;
- ``any_model_id = True``: ``session/set_model`` and the model config option accept
  any id, as ``/model`` does (the agent's ``set_model`` refuses what it cannot use);
- ``session_catalog() -> acpwire.store.SessionCatalog``: the agent's own session
  database, kept in step with acpwire's;
- ``title_for(session_id, user_text, answer_text) -> str | None``: a title for a new
  session from its first exchange (called off the answer path, after the prompt's
  answer; None keeps the first prompt as the title);
- ``shared_approvals()``: the agent's own remembered command approvals (see
  :class:`SharedApprovals`), shown and revoked by ``/approvals``.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

__all__ = ["SetupMethod", "SharedApprovals"]


class SetupMethod(NamedTuple):
    """An agent's own terminal set-up, offered as an auth method."""

    id: str
    name: str
    description: str
    args: list[str]
    """acpwire's arguments that run it (the client starts acpwire with them)."""
    command: str
    """What to run by hand when the client cannot start a terminal method."""


class SharedApprovals(Protocol):
    """Command approvals the agent's own front ends honour (Hermes' allowlist)."""

    where: str
    """Where they live, for ``/approvals`` (e.g. Hermes' config.yaml)."""

    def remember(self, command: str) -> None:
        """Record an "always allow" for exactly ``command``."""
        ...

    def entries(self) -> list[str]: ...

    def revoke(self, entry: str) -> bool:
        """Remove ``entry``; False when it was not there."""
        ...
