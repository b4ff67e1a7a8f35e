"""The protected paths of a workspace, per sandboxed command: held read-only, checked after.

:mod:`.guard` (``SandboxGuard``, started right before a sandboxed run and finished right
after) binds read-only what :mod:`.holds` says, from the bounded walk of :mod:`.tree`
(its fast name test: :mod:`._match`), puts empty placeholders at the missing fixed places
(:mod:`.placeholders`, journaled) and moves protected paths the command created out of
the workspace (:mod:`.quarantine`). May import: :mod:`acpwire.sandbox`'s policy and
bubblewrap argv, :mod:`acpwire.approval.protected`, the agent seam, stdlib.
"""

__all__ = ["guard", "holds", "placeholders", "quarantine", "tree"]
