"""The ``patch`` tool and the edits it applies: find-and-replace, and V4A patches.

:mod:`.patch` (the tool), :mod:`.fuzzy` (find-and-replace that tolerates the small
differences models make when quoting code) and :mod:`.v4a` (the ``*** Begin Patch``
multi-file format). May import: the tools' base, arguments and file access
(:mod:`acpwire.agent.embedded.tools`, :mod:`~acpwire.agent.embedded.tools.fs`), the seam.
"""

__all__ = ["fuzzy", "patch", "v4a"]
