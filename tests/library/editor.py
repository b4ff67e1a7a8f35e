"""A scripted editor for the library tests: records updates, answers permission requests."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio

from acp_v1 import AgentPeer, Client, models as m

STEP_S = 30.0
"""A deadlock guard for one exchange with a child process (start-up included)."""


class Editor(Client):
    """No fs or terminal capabilities: the agent works on disk itself."""

    def __init__(self, agent: AgentPeer) -> None:
        self.agent = agent
        self.updates: list[tuple[str, Any]] = []
        self.permissions: list[m.RequestPermissionRequest] = []
        self.answer = "allow_once"
        self.changed = anyio.Event()

    async def session_update(self, params: m.SessionNotification) -> None:
        self.updates.append((params.session_id, params.update))
        self.changed.set()
        self.changed = anyio.Event()

    async def session_request_permission(
        self, params: m.RequestPermissionRequest
    ) -> m.RequestPermissionResponse:
        self.permissions.append(params)
        return m.RequestPermissionResponse(
            outcome=m.RequestPermissionOutcomeSelected(option_id=self.answer)
        )

    def kinds(self, session_id: str) -> list[str]:
        return [u.session_update for sid, u in self.updates if sid == session_id]

    def text(self, session_id: str) -> str:
        return "".join(
            u.content.text
            for sid, u in self.updates
            if sid == session_id
            and isinstance(u, m.SessionUpdateAgentMessageChunk)
            and isinstance(u.content, m.ContentBlockText)
        )

    async def wait_text(self, session_id: str, fragment: str) -> None:
        while fragment not in self.text(session_id):
            await self.changed.wait()


def prompt(session_id: str, text: str) -> m.PromptRequest:
    return m.PromptRequest(session_id=session_id, prompt=[m.ContentBlockText(text=text)])


def backend_env(home: Path, **extra: str) -> dict[str, str]:
    """A child environment with its own config home and no provider settings."""
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home.parent),
        "LANG": "C.UTF-8",
        "ACPWIRE_HOME": str(home),
        **extra,
    }
