"""``make demo`` end to end: the scripted conversation runs over real stdio and reloads."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.subprocess
def test_demo_runs_a_whole_conversation_offline() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "acpwire.cli.demo"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    out = result.stdout
    assert result.returncode == 0, result.stderr[-2000:]
    assert "[permission] Approve edit:" in out
    assert "[plan] in_progress Write hello.py" in out
    assert "stopReason=end_turn" in out
    assert "hello.py on disk: 'print(\"Hello from acpwire!\")'" in out
    replayed = next(line for line in out.splitlines() if "session/load replayed" in line)
    assert int(replayed.split("replayed ")[1].split()[0]) >= 8
    assert out.rstrip().endswith('{"demo": "ok"}')
    assert "Traceback" not in result.stderr
