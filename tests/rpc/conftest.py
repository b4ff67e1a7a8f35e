"""Shared fixtures for the JSON-RPC runtime tests."""

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
