"""The synchronous agent seam, and the entry to the embedded default agent.

This package speaks OpenAI chat messages and the :mod:`acpwire.agent.seam` contract; it
knows nothing of ACP. The public modules: ``seam`` (the ``SyncAgent`` / ``TurnHooks``
contract), ``base`` (``BaseAgent``) and ``factory`` (``AgentFactory``,
``BaseAgentFactory``, ``SessionContext``), with ``extras`` (what a factory may offer
besides) and ``cancel`` (the cancel token of a turn). The embedded agent is reached
through ``default_factory`` and configured by ``config`` (both public names); its
implementation is :mod:`acpwire.agent.embedded`. May import: stdlib, httpx,
:mod:`acpwire.config`. This package file imports nothing, so that importing the seam
does not load the HTTP client; ``acpwire`` re-exports the public names.
"""

__all__ = ["base", "factory", "seam"]
