"""Fixtures for the probe tests: real bindings generated from each vendored schema.

One ``python -m codegen`` run per schema version per test session (about 1.5 s each, run
side by side), into a temporary folder put at the front of ``sys.path``.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from acpwire.probe import SchemaFeatures, read_features

REPO = Path(__file__).resolve().parents[2]
SCHEMA_REFERENCE = REPO / "tests" / "fixtures" / "schema-reference"

#: key -> schema folder; the bindings package is ``acp_<key>``.
SCHEMA_DIRS: dict[str, Path] = {
    "s119": SCHEMA_REFERENCE / "v1-schema-v1.19.0",
    "s121": SCHEMA_REFERENCE / "v1",
    "s240": REPO / "schema",
}


@pytest.fixture(scope="session")
def bindings(
    tmp_path_factory: pytest.TempPathFactory, schema_dirs: dict[str, Path]
) -> Iterator[dict[str, ModuleType]]:
    """``{key: <acp_key>.models}`` for every vendored schema version."""
    out = tmp_path_factory.mktemp("bindings")
    runs = {
        key: subprocess.Popen(
            [
                sys.executable,
                "-m",
                "codegen",
                "--schema-dir",
                str(schema_dir),
                "--out",
                str(out / f"acp_{key}"),
                "--package",
                f"acp_{key}",
            ],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for key, schema_dir in schema_dirs.items()
    }
    for key, run in runs.items():
        stdout, stderr = run.communicate(timeout=120)
        assert run.returncode == 0, f"codegen for {key} failed:\n{stdout}\n{stderr}"
    sys.path.insert(0, str(out))
    try:
        yield {key: importlib.import_module(f"acp_{key}.models") for key in schema_dirs}
    finally:
        sys.path.remove(str(out))
        for name in [
            n for n in sys.modules if n.split(".")[0] in {f"acp_{k}" for k in schema_dirs}
        ]:
            del sys.modules[name]


@pytest.fixture(scope="session")
def schema_dirs() -> dict[str, Path]:
    missing = [str(d) for d in SCHEMA_DIRS.values() if not (d / "schema.json").exists()]
    if missing:
        pytest.fail(f"schema folders missing (they are part of the repo): {missing}")
    return dict(SCHEMA_DIRS)


@pytest.fixture(scope="session")
def features(bindings: dict[str, ModuleType]) -> dict[str, SchemaFeatures]:
    return {key: read_features(models) for key, models in bindings.items()}
