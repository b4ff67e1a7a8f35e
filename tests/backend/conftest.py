"""Backend tests run on anyio's asyncio backend, never see the developer's provider settings."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # The agent factory reads these from os.environ and they win over the test settings.
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ACPWIRE_MODEL", "ACPWIRE_HOME"):
        monkeypatch.delenv(name, raising=False)
