"""Fixtures for the default-agent tests: a live fake model server and agent factories."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# tests/support is imported as a package from the repository root, which pytest's
# default "prepend" import mode does not put on sys.path by itself.
_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from acpwire.agent.embedded.default import DefaultAgent  # noqa: E402
from acpwire.agent.embedded.provider import AgentConfig  # noqa: E402
from tests.support.fake_llm import FakeLLM  # noqa: E402

AgentFactory = Callable[..., DefaultAgent]


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.fixture
def make_agent(llm: FakeLLM) -> Iterator[AgentFactory]:
    agents: list[DefaultAgent] = []

    def factory(**overrides: object) -> DefaultAgent:
        config = AgentConfig(base_url=llm.base_url, model=llm.model, **overrides)  # type: ignore[arg-type]  # test overrides
        agent = DefaultAgent(config)
        agents.append(agent)
        return agent

    yield factory
    for agent in agents:
        agent.close()
