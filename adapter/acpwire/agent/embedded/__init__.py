"""The embedded default agent: a model client, its turn loop and its tools.

:mod:`.default` (``DefaultAgent``: tools, interrupt and steering) runs turns with
:mod:`._loop`, over the chat client of :mod:`.llm` (its streamed replies: :mod:`.stream`;
TLS: :mod:`.tls`; the provider's model list and context windows: :mod:`.listing`, looked
up in the background by :mod:`.lookup`), the system prompt and the wire form of the
history (:mod:`._context`, compressed by :mod:`.compress`), the model's tool calls
(:mod:`.toolcalls`) and the tools themselves (:mod:`.tools`). Built by :mod:`.factory`
(``DefaultAgentFactory``, the built-in ``default`` registration) from the settings of
:mod:`.provider` (endpoint, key, model). May import: the seam (:mod:`acpwire.agent`),
:mod:`acpwire.config`, stdlib, httpx.
"""

__all__ = [
    "compress",
    "default",
    "factory",
    "listing",
    "llm",
    "lookup",
    "provider",
    "stream",
    "tls",
    "toolcalls",
    "tools",
]
