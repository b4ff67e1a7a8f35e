"""What a running turn asks of the editor, and what the editor's answers mean.

Updates that the client can understand (:mod:`.notifier`, with the diffs that go out
with ``"oldText": null``: :mod:`.null_diffs`), approvals (:mod:`.approvals`), the editor's
files and terminals (:mod:`.services`), its error answers (:mod:`.refusals`) and the
per-session MCP servers (:mod:`.mcp_host`). The backend is reached through the protocol of
:mod:`.backend_view`. May import: :mod:`acpwire.server.sessions`, the approval policy, the
sandbox's plans, rendering, the probe and the runtime below them.
"""

__all__ = [
    "approvals",
    "backend_view",
    "mcp_host",
    "notifier",
    "null_diffs",
    "refusals",
    "services",
]
