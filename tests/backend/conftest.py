"""Backend tests run on anyio's asyncio backend, never see the developer's provider settings;
``user_home`` gives a test a fake HOME."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # The agent factory reads these from os.environ and they win over the test settings.
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ACPWIRE_MODEL", "ACPWIRE_HOME"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake HOME (and no ACPWIRE_HOME/HERMES_HOME of the machine running the tests); the
    system temp dir (a workspace root) moves away from ``tmp_path``."""
    home = tmp_path / "user"
    home.mkdir()
    (tmp_path / "systmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "systmp"))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("ACPWIRE_HOME", raising=False)
    monkeypatch.delenv("HERMES_HOME", raising=False)
    return home
