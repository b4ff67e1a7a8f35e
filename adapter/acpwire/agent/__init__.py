"""The synchronous agent seam, what any agent implements; the embedded agent, one of them.

This package speaks OpenAI chat messages and the :mod:`acpwire.agent.seam` contract; it
knows nothing of ACP. The seam, public: ``seam`` (the ``SyncAgent`` / ``TurnHooks``
contract), ``base`` (``BaseAgent``), ``factory`` (``AgentFactory``, ``BaseAgentFactory``,
``SessionContext``), ``config`` (``ConfigError`` and ``ModelList``, for any factory),
``extras`` (what a factory may offer besides) and ``cancel`` (the cancel token of a
turn). The embedded default agent, its factory and its settings included, is
:mod:`acpwire.agent.embedded` (the seam never imports it). May import: stdlib, httpx,
:mod:`acpwire.config`. This package file imports nothing, so that importing the seam
does not load the HTTP client; ``acpwire`` re-exports the public names.
"""

__all__ = ["base", "factory", "seam"]
