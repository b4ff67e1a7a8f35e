"""The backend's log says at start-up whether commands are sandboxed, and how to get the
sandbox when they are not (a machine without bubblewrap: ``ACPWIRE_BWRAP`` names none)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.stdio.stdio_support import ACPWIRE, STEP_TIMEOUT, child_env, raw_child, write_home
from tests.support.fake_llm import FakeLLM

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]


async def test_the_start_up_log_says_how_to_get_the_sandbox(tmp_path: Path) -> None:
    work = (tmp_path / "work").resolve()
    work.mkdir()
    stderr_path = tmp_path / "stderr.log"
    env = {**child_env(tmp_path / "home"), "ACPWIRE_BWRAP": str(tmp_path / "no-bwrap")}
    with FakeLLM() as llm:
        write_home(tmp_path / "home", llm.base_url)
        async with raw_child(ACPWIRE, env=env, stderr_path=stderr_path) as peer:
            with anyio.fail_after(STEP_TIMEOUT):
                await peer.call("initialize", {"protocolVersion": 1})
                await peer.call("session/new", {"cwd": str(work), "mcpServers": []})
                while "bubblewrap" not in stderr_path.read_text():
                    await anyio.sleep(0.05)
            assert await peer.finish() == 0
    log = stderr_path.read_text()
    assert "no command sandbox" in log and "apt-get install bubblewrap" in log
