"""The synchronous agent seam and the embedded default agent.

This package speaks OpenAI chat messages and the :mod:`acpwire.agent.seam` contract; it
knows nothing of ACP. May import: stdlib, httpx, ``acpwire.agent``. Import from the
submodules (``acpwire.agent.seam``, ``.default``, ``.config``, ``.llm``, ``.tools``):
this package file stays empty so that importing the seam does not load the HTTP client.
"""
