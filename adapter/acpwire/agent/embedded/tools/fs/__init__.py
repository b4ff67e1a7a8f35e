"""How the file tools touch files: paths, editor-aware reads, approved and link-safe writes.

:mod:`.fileio` (paths resolved against the session cwd, reads through the editor when it
offers them, writes after their approval), :mod:`.regular` (a file read only when it is a
regular file of bounded size) and :mod:`.safewrite` (writes that land where the approval
said, even if links change while it was open). May import: the tools' base and
arguments (:mod:`acpwire.agent.embedded.tools`), the seam, :mod:`acpwire.config`, stdlib.
"""

__all__ = ["fileio", "regular", "safewrite"]
