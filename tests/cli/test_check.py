"""``acpwire check`` as a command: its exit codes, its four report formats, its usage
errors, over a real ``python -m acpwire check`` against the conformance fixture agent."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from acpwire.cli._parser import parse
from acpwire.conformance import CHECKS

pytestmark = pytest.mark.subprocess

AGENT = Path(__file__).resolve().parents[1] / "fixtures" / "check_agent.py"
FAST = ["--timeout", "3", "--exit-timeout", "1"]


def check(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acpwire", "check", *argv],
        capture_output=True,
        text=True,
        timeout=120,
    )


def agent(broken: str | None = None) -> list[str]:
    return ["--", sys.executable, str(AGENT), *(["--break", broken] if broken else [])]


def test_a_conforming_agent_exits_0_with_a_json_report(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    done = check("--model-endpoint", "--format", "json", "-o", str(out), *FAST, *agent())
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert [c["name"] for c in report["checks"]] == [c.name for c in CHECKS]
    assert {c["status"] for c in report["checks"]} == {"PASS"}
    for entry in report["checks"]:
        assert set(entry) >= {"name", "status", "evidence", "spec"} and entry["spec"]
    assert report["agent"]["name"] == "check-agent"
    assert report["summary"]["fail"] == 0 and report["summary"]["pass"] == len(CHECKS)
    progress = done.stderr.splitlines()
    assert progress[: len(CHECKS)] == [f"acpwire check: PASS {c.name}" for c in CHECKS]
    assert "0 failed" in progress[-1]


def test_one_failed_check_exits_1_and_names_it_with_its_spec() -> None:
    done = check("--only", "unknown-method", *FAST, *agent("unknown-method"))
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("acpwire check: ")
    assert lines[1].split()[:2] == ["FAIL", "unknown-method"]
    assert "expected error -32601" in lines[1]
    assert "spec: JSON-RPC 2.0 § 5.1 Error object" in lines[2]
    assert "0 passed, 1 failed, 0 skipped" in lines[-1]
    quiet = check("--quiet", "--only", "unknown-method", *FAST, *agent("unknown-method"))
    assert quiet.returncode == 1 and quiet.stderr == ""
    assert quiet.stdout.splitlines()[1] == lines[1]


def test_junit_and_markdown_reports(tmp_path: Path) -> None:
    picked = ["--only", "prompt,invalid-params", "--only", "session-list"]
    done = check("--format", "junit", *picked, *FAST, *agent("invalid-params"))
    assert done.returncode == 1
    suite = ET.fromstring(done.stdout).find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "1", "1")
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert set(cases) == {"prompt", "invalid-params", "session-list"}
    failure = cases["invalid-params"].find("failure")
    assert failure is not None and "-32602" in (failure.get("message") or "")
    skipped = cases["prompt"].find("skipped")  # model-free: no --model-endpoint
    assert skipped is not None and "no model endpoint" in (skipped.get("message") or "")
    done = check("--format", "md", "--only", "session-list", *FAST, *agent())
    assert done.returncode == 0
    assert "| `session-list` | **PASS** |" in done.stdout


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--only", "nope", *agent()], "unknown check nope"),
        (["--skip", "prompt,nope2", *agent()], "unknown check nope2"),
        (["--only", "promt", *agent()], "unknown check promt (did you mean prompt?)"),
        ([], "name the agent's command after --"),
        (["--agent-env", "NOEQUALS", *agent()], "expected KEY=VALUE"),
    ],
)
def test_usage_errors_exit_2(argv: list[str], says: str) -> None:
    done = check(*argv)
    assert done.returncode == 2
    assert says in done.stderr
    assert done.stdout == ""


def test_a_command_that_cannot_start_exits_127() -> None:
    done = check("--", "/nonexistent/agent")
    assert done.returncode == 127
    assert "cannot start /nonexistent/agent" in done.stderr


def test_list_names_every_check() -> None:
    done = check("--list")
    assert done.returncode == 0
    assert [line.split()[0] for line in done.stdout.splitlines()] == [c.name for c in CHECKS]


def test_the_self_test_keeps_its_flag() -> None:
    # `--check` is the self-test it always was; `check` is the conformance run.
    from acpwire.cli._parser import command_of

    assert command_of(parse(["--check"])) == "self-check"
    assert command_of(parse(["check", "--", "x"])) == "check"
    args = parse(["check", "--only", "a,b", "--only", "c", "--", "agent", "--flag"])
    assert args.only == ["a", "b", "c"] and args.argv == ["--", "agent", "--flag"]


def test_the_command_loads_nothing_of_the_backend() -> None:
    # `pip install acpwire` (no backend extra) is enough to run it in an agent's CI.
    code = (
        "import sys\n"
        "from acpwire.cli import main\n"
        "main(['check', '--list'])\n"
        "import acpwire.conformance.run, acpwire.conformance.report\n"
        "print(sorted(m for m in sys.modules if m.startswith(('acpwire.', 'anyio', 'httpx', 'mcp'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    loaded = done.stdout.splitlines()[-1]
    for heavy in ("acpwire.server", "acpwire.agent", "acpwire.rpc", "anyio", "httpx", "'mcp"):
        assert heavy not in loaded
    assert "acpwire.conformance.run" in loaded
