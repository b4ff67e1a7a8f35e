"""The committed ``generated/acp_v1`` is exactly what codegen renders from ``schema/``."""

from __future__ import annotations

import subprocess
import sys

from tests.generated.schema_facts import ROOT


def test_codegen_check_reports_up_to_date() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "codegen", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "up to date" in proc.stdout
