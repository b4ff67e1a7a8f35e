"""The registry manifest names the package version it launches, with the required fields."""

from __future__ import annotations

import tomllib
from pathlib import Path

from acpwire.registry import manifest

ROOT = Path(__file__).resolve().parents[2]


def test_manifest_fields_and_version_match_the_package() -> None:
    data = manifest()
    for key in (
        "id",
        "name",
        "version",
        "description",
        "repository",
        "authors",
        "license",
        "distribution",
    ):
        assert data.get(key), f"agent.json lacks {key}"
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert data["version"] == version
    # The backend's dependencies are the `backend` extra: the core alone cannot serve.
    assert data["distribution"]["uvx"]["package"] == f"acpwire[backend]=={version}"


def test_package_version_matches_pyproject() -> None:
    import acpwire

    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert acpwire.__version__ == version
