"""Fixtures of the attack replays: anyio on asyncio, the repository root on ``sys.path``,
``agent`` (each test runs for the embedded agent and for Hermes; the Hermes half skips,
saying why, where no Python with hermes-agent exists) and ``sandboxed`` (skips, saying
why, where bubblewrap cannot sandbox commands here)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["embedded", "hermes"])
def agent(request: pytest.FixtureRequest) -> str:
    from tests.security.attack_rig import agent_python

    name = str(request.param)
    python, why_not = agent_python(name)
    if python is None:
        pytest.skip(why_not)
    return name


@pytest.fixture
def sandboxed() -> None:
    from tests.backend.sandbox_rig import require_sandbox

    require_sandbox()
