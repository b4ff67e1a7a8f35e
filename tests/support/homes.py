"""A test's own home directories: the user's, acpwire's config home and Hermes' home."""

from __future__ import annotations

from pathlib import Path

import pytest

__all__ = ["isolated_home"]


def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point ``HOME``, ``ACPWIRE_HOME`` and ``HERMES_HOME`` into ``tmp_path``; the user's
    home (created)."""
    user = tmp_path / "user"
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.setenv("ACPWIRE_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "hermes"))
    return user
