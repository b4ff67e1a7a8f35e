"""Fixtures for the Hermes adapter tests: anyio on asyncio, and the repository root on
``sys.path`` (the tests import ``tests.agent.recording`` and ``bench.model_server``)."""

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
