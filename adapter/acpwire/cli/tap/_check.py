"""The tap's live validation: :class:`acpwire.conformance.ProtocolChecker` behind the
recorder's :class:`~._trace.Inspector` seam, imported with the first complete line.

The tap starts on the standard library alone; the checker needs pydantic and the
bindings (some 100 ms to import), so it loads on the recorder's thread when the first
line arrives, while the forwarding threads go on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from acpwire.cli.tap._trace import Direction, Note

if TYPE_CHECKING:
    from acpwire.conformance import ProtocolChecker

__all__ = ["LiveChecker"]


class LiveChecker:
    """One connection's protocol checker, created on first use."""

    def __init__(self) -> None:
        self._checker: ProtocolChecker | None = None

    def _get(self) -> ProtocolChecker:
        if self._checker is None:
            from acpwire.conformance import ProtocolChecker

            self._checker = ProtocolChecker()
        return self._checker

    def inspect(self, direction: Direction, message: object) -> Sequence[Note]:
        return self._get().check(direction, message)

    def unparsable(self, direction: Direction) -> Sequence[Note]:
        return self._get().unparsable(direction)

    def finish(self) -> Sequence[Note]:
        return () if self._checker is None else self._checker.finish()
