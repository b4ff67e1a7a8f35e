"""Fixtures for the tests of the generated ACP bindings (``acp_v1``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The helpers here and tests/fixtures are imported as packages from the repository
# root, which pytest's default "prepend" import mode does not put on sys.path.
_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
