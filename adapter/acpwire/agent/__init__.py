"""The synchronous agent seam and the embedded default agent.

This package speaks OpenAI chat messages and the :mod:`acpwire.agent.seam` contract; it
knows nothing of ACP. May import: stdlib, httpx, ``acpwire.agent``. The public modules:
``seam`` (the ``SyncAgent`` / ``TurnHooks`` contract), ``base`` (``BaseAgent``) and
``factory`` (``AgentFactory``, ``BaseAgentFactory``, ``SessionContext``); the rest is the
embedded agent (``default_factory``, ``default``, ``config``, ``llm``, ``tools``). This
package file imports nothing, so that importing the seam does not load the HTTP client;
``acpwire`` re-exports the public names.
"""

__all__ = ["base", "factory", "seam"]
