"""The ``acpwire`` command line as an editor or a user meets it: real processes, real exit codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from acpwire import __version__
from tests.stdio.stdio_support import (
    ACPWIRE,
    STEP_TIMEOUT,
    child_env,
    closed_port,
    parse_lines,
    raw_child,
    write_home,
)
from tests.support.fake_llm import FakeLLM

pytestmark = pytest.mark.subprocess


def run_cli(
    home: Path, *args: str, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ACPWIRE, *args],
        env={**child_env(home), **(extra_env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=STEP_TIMEOUT,
        check=False,
    )


def one_line(stdout: str) -> str:
    lines = stdout.splitlines()
    assert len(lines) == 1, f"expected one line on stdout, got {lines!r}"
    return lines[0]


def test_version_prints_the_version(tmp_path: Path) -> None:
    result = run_cli(tmp_path / "home", "--version")
    assert result.returncode == 0
    assert one_line(result.stdout) == f"acpwire {__version__}"
    script = Path(sys.executable).with_name("acpwire")
    if script.exists():  # the console script an editor launches says the same
        via_script = subprocess.run(
            [str(script), "--version"], capture_output=True, text=True, timeout=STEP_TIMEOUT
        )
        assert via_script.stdout == result.stdout


def test_check_with_a_reachable_model_server_passes(tmp_path: Path) -> None:
    with FakeLLM() as llm:
        home = write_home(tmp_path / "home", llm.base_url)
        result = run_cli(home, "--check")
    assert result.returncode == 0, result.stderr
    line = one_line(result.stdout)
    assert line.startswith("acpwire check OK"), line
    assert "1 model(s)" in line and str(home) in line
    assert "Traceback" not in result.stderr


def test_check_says_how_to_get_the_sandbox(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-bwrap")
    with FakeLLM() as llm:
        home = write_home(tmp_path / "home", llm.base_url)
        result = run_cli(home, "--check", extra_env={"ACPWIRE_BWRAP": missing})
    line = one_line(result.stdout)
    assert line.startswith("acpwire check OK"), line
    assert "no command sandbox" in line and "apt-get install bubblewrap" in line


def test_check_without_a_model_server_fails_in_one_line(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    home = write_home(tmp_path / "home", url, model=None)
    result = run_cli(home, "--check")
    assert result.returncode == 1
    line = one_line(result.stdout)
    assert line.startswith("acpwire check FAILED"), line
    assert url in line
    assert "Traceback" not in result.stderr


def test_check_with_a_configured_model_but_no_server_fails(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    home = write_home(tmp_path / "home", url, model="fake-model")
    result = run_cli(home, "--check")
    line = one_line(result.stdout)
    assert result.returncode == 1, line
    assert line.startswith("acpwire check FAILED"), line


@pytest.mark.anyio
async def test_probes_and_session_new_without_provider_answer_errors(tmp_path: Path) -> None:
    home = write_home(tmp_path / "home", f"http://127.0.0.1:{closed_port()}/v1", model=None)
    stderr_path = tmp_path / "stderr.log"
    async with raw_child(ACPWIRE, env=child_env(home), stderr_path=stderr_path) as peer:
        with anyio.fail_after(STEP_TIMEOUT):
            ping = await peer.call("ping")
            health = await peer.call("health", {})
            await peer.send({"jsonrpc": "2.0", "method": "ping"})  # a notification: no answer
            init = await peer.call("initialize", {"protocolVersion": 1})
            new = await peer.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        assert await peer.finish() == 0

    assert ping["error"]["code"] == -32601
    assert health["error"]["code"] == -32601
    assert init["result"]["protocolVersion"] == 1
    assert new["error"]["code"] == -32000
    assert "acpwire --setup" in new["error"]["message"]
    # Exactly the four answers: the ping notification got none.
    assert [m.get("id") for m in parse_lines(peer.lines)] == [1, 2, 3, 4]
    assert "Traceback" not in stderr_path.read_text(encoding="utf-8")
