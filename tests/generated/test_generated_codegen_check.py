"""The committed ``generated/acp_v1`` is exactly what codegen renders from ``schema/``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from codegen.__main__ import main
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


def test_codegen_check_names_stale_and_stray_files_in_subpackages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "acp_tmp"
    args = ["--out", str(out), "--package", "acp_tmp"]
    assert main(args) == 0
    assert (out / "models" / "connection.py").exists() and (
        out / "dispatch" / "__init__.py"
    ).exists()
    (out / "models" / "leftover.py").write_text("x = 1\n")
    envelopes = out / "dispatch" / "connection.py"
    envelopes.write_text(envelopes.read_text() + "# edited by hand\n")
    capsys.readouterr()
    assert main([*args, "--check"]) == 1
    printed = capsys.readouterr()
    assert "models/leftover.py: not produced by codegen" in printed.out
    assert "dispatch/connection.py" in printed.out and "stale (2 files)" in printed.err
    assert main(args) == 0  # a regeneration removes what codegen no longer produces
    assert not (out / "models" / "leftover.py").exists()
    assert main([*args, "--check"]) == 0
