"""Shared fixtures for the codegen tests: the repo root on sys.path and the reference schemas."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# codegen is a build-time tool, not an installed package: import it from the repo root.
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

REFERENCE = ROOT / "tests" / "fixtures" / "schema-reference"
V1_19 = REFERENCE / "v1-schema-v1.19.0"
V1_21 = REFERENCE / "v1"
TS_2_4 = REFERENCE / "ts-sdk-2.4.0" / "v1"


@pytest.fixture
def reference() -> Path:
    """The reference schema folders; tests that compare real versions need them."""
    if not all((d / "schema.unstable.json").exists() for d in (V1_19, V1_21, TS_2_4)):
        pytest.fail(f"reference schemas missing under {REFERENCE} (they are part of the repo)")
    return REFERENCE


@pytest.fixture
def schema_copy(tmp_path: Path) -> Path:
    """A copy of the repo's vendored schema folder, safe to update."""
    target = tmp_path / "schema"
    shutil.copytree(ROOT / "schema", target)
    return target
