"""Fixtures for the MCP host tests: the anyio backend and real sessions with real agents."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from acpwire.agent.embedded.default import DefaultAgent
from acpwire.agent.embedded.provider import AgentConfig
from acpwire.server.sessions.state import SessionState
from acpwire.store import SessionRecord
from tests.mcp.support import MakeState


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def make_state(tmp_path: Path) -> Iterator[MakeState]:
    """Builds sessions around real ``DefaultAgent``s (they only connect when a turn runs)."""
    agents: list[DefaultAgent] = []

    def factory(session_id: str = "s", base_url: str = "http://127.0.0.1:9/v1") -> SessionState:
        agent = DefaultAgent(AgentConfig(base_url=base_url, model="m"))
        agents.append(agent)
        return SessionState(record=SessionRecord(id=session_id, cwd=str(tmp_path)), agent=agent)

    yield factory
    for agent in agents:
        agent.close()
