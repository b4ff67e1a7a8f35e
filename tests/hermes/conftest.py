"""Fixtures for the Hermes adapter tests: anyio on asyncio, the repository root on
``sys.path`` (the tests import ``tests.agent.recording`` and ``bench.model_server``), and
``hermes_py``, the Python the end-to-end tests run (they skip, saying why, without one)."""

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


@pytest.fixture(scope="session")
def hermes_py() -> str:
    from tests.hermes.hermes_rig import hermes_python

    python, why_not = hermes_python()
    if python is None:
        pytest.skip(why_not)
    return python
