"""The ``acpwire`` command line as an editor or a user meets it: real processes, real exit codes."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import anyio
import pytest

from acpwire import __version__
from acpwire.cli._parser import COMMANDS
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
    assert line.startswith("acpwire self-check FAILED"), line
    assert url in line
    assert "Traceback" not in result.stderr


def test_check_with_a_configured_model_but_no_server_fails(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    home = write_home(tmp_path / "home", url, model="fake-model")
    result = run_cli(home, "--check")
    line = one_line(result.stdout)
    assert result.returncode == 1, line
    assert line.startswith("acpwire self-check FAILED"), line


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


# The command line: the flags kept from before commands existed, the commands, the errors.

INIT_LINE = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'


def run_with_input(
    home: Path, *args: str, data: bytes, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*ACPWIRE, *args],
        env={**child_env(home), **(extra_env or {})},
        input=data,
        capture_output=True,
        timeout=STEP_TIMEOUT,
        check=False,
    )


def _session_capabilities(stdout: bytes) -> set[str]:
    (answer,) = parse_lines(stdout.splitlines())
    return set(answer["result"]["agentCapabilities"]["sessionCapabilities"])


@pytest.mark.parametrize("args", [(), ("serve",)], ids=["bare", "serve"])
def test_serving_answers_initialize_and_ends_with_its_input(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    home = write_home(tmp_path / "home", f"http://127.0.0.1:{closed_port()}/v1")
    result = run_with_input(home, *args, data=INIT_LINE)
    assert result.returncode == 0, result.stderr
    assert "fork" in _session_capabilities(result.stdout)


@pytest.mark.parametrize(
    "args", [("--no-unstable",), ("serve", "--no-unstable"), ("--no-unstable", "serve")]
)
def test_no_unstable_leaves_fork_unadvertised(tmp_path: Path, args: tuple[str, ...]) -> None:
    home = write_home(tmp_path / "home", f"http://127.0.0.1:{closed_port()}/v1")
    result = run_with_input(home, *args, data=INIT_LINE)
    assert result.returncode == 0, result.stderr
    assert _session_capabilities(result.stdout) == {"close", "delete", "list", "resume"}


@pytest.mark.parametrize(
    "args", [("--log-level", "ERROR"), ("serve", "--log-level", "ERROR")], ids=["flag", "serve"]
)
def test_log_level_quiets_the_start_up_log(tmp_path: Path, args: tuple[str, ...]) -> None:
    home = write_home(tmp_path / "home", f"http://127.0.0.1:{closed_port()}/v1")
    chatty = run_with_input(home, data=INIT_LINE)
    quiet = run_with_input(home, *args, data=INIT_LINE)
    assert b"acpwire serving ACP on stdio" in chatty.stderr
    assert quiet.returncode == 0 and quiet.stderr == b"", quiet.stderr
    assert quiet.stdout == chatty.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("--agent", "no_such_pkg:make"),
        ("serve", "--agent", "no_such_pkg:make"),
        ("--agent", "no_such_pkg:make", "serve"),
    ],
)
def test_an_agent_spec_that_cannot_be_served_is_one_line_and_exit_2(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    result = run_with_input(tmp_path / "home", *args, data=INIT_LINE)
    assert result.returncode == 2
    assert result.stdout == b""
    (line,) = result.stderr.decode().splitlines()[-1:]
    assert line.startswith("acpwire: ") and "no_such_pkg" in line, result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("--check",),
        ("self-check",),
        ("--agent", "default", "self-check"),
        ("self-check", "--agent", "default"),
    ],
)
def test_check_as_a_flag_or_a_command_says_the_same(tmp_path: Path, args: tuple[str, ...]) -> None:
    with FakeLLM() as llm:
        home = write_home(tmp_path / "home", llm.base_url)
        result = run_cli(home, *args)
    assert result.returncode == 0, result.stderr
    assert one_line(result.stdout).startswith("acpwire check OK: acpwire default agent")


def test_check_of_an_agent_that_cannot_be_served_fails(tmp_path: Path) -> None:
    with FakeLLM() as llm:
        home = write_home(tmp_path / "home", llm.base_url)
        result = run_cli(home, "self-check", "--agent", "no_such_pkg:make")
    assert result.returncode == 1
    assert (
        one_line(result.stdout).startswith("acpwire self-check FAILED")
        and "no_such_pkg" in result.stdout
    )


@pytest.mark.parametrize(
    "args", [("--setup", "--yes"), ("--setup", "-y"), ("setup", "--yes"), ("--yes", "setup")]
)
def test_setup_accepting_the_proposals_saves_the_endpoint_and_model(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    home = tmp_path / "home"
    with FakeLLM(models=["small", "large"]) as llm:
        result = run_cli(home, *args, extra_env={"OPENAI_BASE_URL": llm.base_url})
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""  # stdout may be an editor's pipe: set-up talks on stderr
    saved = tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
    assert saved["model"] == {"base_url": llm.base_url, "model": "small"}
    assert "Saved" in result.stderr


@pytest.mark.parametrize("args", [("--hermes-setup",), ("hermes-setup",)])
def test_hermes_setup_without_hermes_says_so(tmp_path: Path, args: tuple[str, ...]) -> None:
    if importlib.util.find_spec("hermes_cli") is not None:
        pytest.skip("hermes-agent is installed here: its set-up is interactive")
    result = run_cli(tmp_path / "home", *args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("acpwire: hermes-agent is not importable here")


def test_help_lists_every_command(tmp_path: Path) -> None:
    result = run_cli(tmp_path / "home", "--help")
    assert result.returncode == 0
    listed = result.stdout.split("commands:", 1)[1]
    for command in COMMANDS:
        assert re.search(rf"^\s+{re.escape(command)}\s", listed, re.MULTILINE), command
    for flag in ("--check", "--setup", "--hermes-setup", "--version", "--agent", "--no-unstable"):
        assert flag in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("bogus",),
        ("--bogus",),
        ("self-check", "--bogus"),
        ("check", "--bogus"),
        ("setup", "--agent", "x"),
        ("--check", "setup"),
        ("self-check", "setup"),
    ],
)
def test_a_usage_error_is_one_line_on_stderr_and_exit_2(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    result = run_cli(tmp_path / "home", *args)
    assert result.returncode == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("acpwire") and "error:" in line, line
