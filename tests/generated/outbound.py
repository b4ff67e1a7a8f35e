"""A real ``acp_v1.peers.Outbound`` for tests: records what a peer sends, answers from a script."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class Sent:
    kind: Literal["request", "notification"]
    method: str
    params: Any


@dataclass
class RecordingOutbound:
    """Records every call; ``request`` answers with the raw result scripted for its method."""

    results: Mapping[str, Any] = field(default_factory=dict)
    sent: list[Sent] = field(default_factory=list)

    async def request(self, method: str, params: Any) -> Any:
        self.sent.append(Sent("request", method, params))
        if method not in self.results:
            raise LookupError(f"no scripted result for {method!r}")
        return self.results[method]

    async def notify(self, method: str, params: Any) -> None:
        self.sent.append(Sent("notification", method, params))

    def methods(self) -> list[str]:
        return [s.method for s in self.sent]
