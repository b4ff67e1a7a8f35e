"""``acpwire tap``: a transparent stdio proxy, over real pipes and real processes.

The agents behind the tap are ``python -m acpwire`` itself and small Python scripts that
record what they received, echo it, exit with a status, kill themselves, write to stderr
or count the SIGINTs they get. Nothing is mocked: each test starts ``acpwire tap`` as an
editor would and reads what each side received.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from acpwire.cli.tap._files import KEEP_RUNS
from acpwire.cli.tap._mask import MASK
from tests.stdio.stdio_support import (
    ACPWIRE,
    EXIT_TIMEOUT,
    STEP_TIMEOUT,
    child_env,
    closed_port,
    raw_child,
    request,
    write_home,
)

pytestmark = pytest.mark.subprocess

PY = sys.executable

ECHO = """
import os, sys
received = bytearray()
while chunk := os.read(0, 65536):
    received += chunk
    os.write(1, chunk)
with open(sys.argv[1], "wb") as f:
    f.write(received)
os.write(1, sys.argv[2].encode("latin-1"))
"""
"""Writes back what it reads; at end of input, saves it to argv[1] and sends argv[2]."""

COUNT_SIGINT = """
import os, signal, sys
count = 0
def counted(signum, frame):
    global count
    count += 1
    with open(sys.argv[1], "w") as f:
        f.write(str(count))
signal.signal(signal.SIGINT, counted)
os.write(1, b"ready\\n")
while os.read(0, 65536):
    pass
with open(sys.argv[1], "w") as f:
    f.write(f"{count} at exit")
"""


def tap_command(*options: str, agent: list[str]) -> list[str]:
    return [*ACPWIRE, "tap", *options, "--", *agent]


def tap_env(home: Path) -> dict[str, str]:
    return child_env(home)


def run_tap(
    tmp_path: Path, *options: str, agent: list[str], data: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        tap_command(*options, agent=agent),
        input=data,
        capture_output=True,
        env=tap_env(tmp_path / "home"),
        timeout=STEP_TIMEOUT,
        check=False,
    )


def read_trace(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


# Bytes for bytes, whatever they are.


def test_every_byte_reaches_the_other_side_unchanged(tmp_path: Path) -> None:
    """JSON lines, binary garbage, a CRLF line, blank lines and a last line without its
    newline, both ways; the trace records each complete or final line once."""
    sent = (
        line(request(1, "initialize", {"protocolVersion": 1}))
        + b"\x00\xff\xfe not json \x80\n"
        + b'{"jsonrpc":"2.0","method":"x/note","params":{"t":"caf\xc3\xa9"}}\r\n'
        + b"\n  \n"
        + b'{"jsonrpc":"2.0","id":"half'
    )
    tail = "\x01agent's last words\xff"
    received = tmp_path / "received.bin"
    trace = tmp_path / "trace.jsonl"
    result = run_tap(
        tmp_path, "--trace", str(trace), agent=[PY, "-c", ECHO, str(received), tail], data=sent
    )
    assert result.returncode == 0, result.stderr
    assert received.read_bytes() == sent
    assert result.stdout == sent + tail.encode("latin-1")
    records = read_trace(trace)
    to_agent = [r for r in records if r["dir"] == "client->agent"]
    to_client = [r for r in records if r["dir"] == "agent->client"]
    assert [r["kind"] for r in to_agent] == ["request", "invalid", "notification", "invalid"]
    assert [r["kind"] for r in to_client] == [
        "request",
        "invalid",
        "notification",
        "invalid",
    ]
    assert (
        to_agent[0]["raw"] == line(request(1, "initialize", {"protocolVersion": 1}))[:-1].decode()
    )
    assert to_agent[1]["raw"] == "\x00\ufffd\ufffd not json \ufffd"
    assert to_agent[2]["raw"].endswith("\r") and to_agent[2]["method"] == "x/note"
    assert to_agent[3]["raw"] == '{"jsonrpc":"2.0","id":"half'
    # The echo's last line: the client's half line, then its own last words.
    assert to_client[-1]["raw"] == '{"jsonrpc":"2.0","id":"half' + "\x01agent's last words\ufffd"
    times = [r["t"] for r in records]
    assert all(isinstance(t, float) and 0 <= t < STEP_TIMEOUT for t in times)


@pytest.mark.anyio
async def test_an_editor_session_with_acpwire_behind_the_tap(tmp_path: Path) -> None:
    """The real backend behind the tap: every line each side sent reaches the other as
    it was sent, and the trace names each message's direction, id, method and kind."""
    home = write_home(tmp_path / "home", f"http://127.0.0.1:{closed_port()}/v1")
    trace = tmp_path / "trace.jsonl"
    work = tmp_path / "work"
    work.mkdir()
    command = tuple(tap_command("--trace", str(trace), agent=list(ACPWIRE)))
    sent = [
        line(request(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})),
        line({"jsonrpc": "2.0", "method": "$/ping"}),
        line(request(2, "authenticate", {"methodId": "acpwire-setup", "password": "hunter2"})),
        line(request("three", "session/list", {})),
        line(request(4, "no/such_method", {})),
    ]
    async with raw_child(command, env=child_env(home), stderr_path=tmp_path / "err.log") as peer:
        with anyio.fail_after(STEP_TIMEOUT):
            await peer.send_bytes(sent[0])
            await peer.wait_for(lambda m: m.get("id") == 1)
            for data in sent[1:]:
                await peer.send_bytes(data)
            waiting: set[object] = {2, "three", 4}  # answered in any order
            while waiting:
                waiting.discard((await peer.next_message()).get("id"))
        assert await peer.finish() == 0
    records = read_trace(trace)
    to_agent = [r for r in records if r["dir"] == "client->agent"]
    to_client = [r for r in records if r["dir"] == "agent->client"]
    # What the client sent is what the tap forwarded (the trace holds the lines as read,
    # masked ones aside), and what the client received is what the agent wrote.
    assert [r["raw"] for r in to_agent if not r.get("masked")] == [
        data[:-1].decode() for i, data in enumerate(sent) if i != 2
    ]
    assert [r["raw"].encode() for r in to_client] == peer.lines
    assert [(r["kind"], r["method"], r["id"]) for r in to_agent] == [
        ("request", "initialize", 1),
        ("notification", "$/ping", None),
        ("request", "authenticate", 2),
        ("request", "session/list", "three"),
        ("request", "no/such_method", 4),
    ]
    answers = {r["id"]: (r["kind"], r["method"]) for r in to_client}
    assert answers == {
        1: ("response", "initialize"),
        2: ("response", "authenticate"),
        "three": ("response", "session/list"),
        4: ("response", "no/such_method"),
    }
    # The password is on the wire but not in the trace.
    (auth,) = [r for r in to_agent if r["method"] == "authenticate"]
    assert auth["masked"] is True
    assert json.loads(auth["raw"])["params"] == {"methodId": "acpwire-setup", "password": MASK}
    assert "hunter2" not in trace.read_text(encoding="utf-8")
    assert stat.S_IMODE(trace.stat().st_mode) == 0o600


# Secrets: masked in the trace, never on the wire.

SECRET_MESSAGES = [
    request(
        1,
        "session/new",
        {
            "cwd": "/w",
            "mcpServers": [
                {
                    "name": "files",
                    "command": "mcp-files",
                    "args": [],
                    "env": [{"name": "DATABASE_URL", "value": "postgres://u:pw-in-url@h/db"}],
                },
                {
                    "type": "http",
                    "name": "remote",
                    "url": "https://mcp.example/x",
                    "headers": [{"name": "Authorization", "value": "Bearer tok-header"}],
                },
            ],
        },
    ),
    request(
        2,
        "terminal/create",
        {
            "sessionId": "s",
            "command": "make",
            "env": [
                {"name": "GITHUB_TOKEN", "value": "ghp-env-token"},
                {"name": "LANG", "value": "C.UTF-8"},
            ],
        },
    ),
    request(
        3,
        "session/prompt",
        {
            "sessionId": "s",
            "prompt": [],
            "_meta": {
                "vendor": {"api_key": "meta-key", "promptTokens": 812, "authed": True},
                "terminal-auth": {"command": "vendor", "args": ["login"]},
                "trace": 1,
            },
        },
    ),
    request(4, "authenticate", {"methodId": "vendor", "_meta": {"otp": "auth-otp"}}),
]
SECRETS = ["pw-in-url", "tok-header", "ghp-env-token", "meta-key", "auth-otp"]


@pytest.mark.parametrize("mask", [True, False], ids=["masked", "no-mask"])
def test_secrets_are_masked_in_the_trace_only(tmp_path: Path, mask: bool) -> None:
    sent = b"".join(line(m) for m in SECRET_MESSAGES)
    trace = tmp_path / "trace.jsonl"
    options = ["--trace", str(trace)] + ([] if mask else ["--no-mask"])
    result = run_tap(
        tmp_path, *options, agent=[PY, "-c", ECHO, str(tmp_path / "got"), ""], data=sent
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == sent  # the wire keeps every secret
    text = trace.read_text(encoding="utf-8")
    for secret in SECRETS:
        assert (secret in text) is not mask, secret
    records = [r for r in read_trace(trace) if r["dir"] == "client->agent"]
    assert [bool(r.get("masked")) for r in records] == [mask] * 4
    if mask:
        new, terminal, prompt, auth = (json.loads(r["raw"]) for r in records)
        files, remote = new["params"]["mcpServers"]
        assert files["env"] == [{"name": "DATABASE_URL", "value": MASK}]
        assert files["command"] == "mcp-files"
        assert remote["headers"] == [{"name": "Authorization", "value": MASK}]
        assert remote["url"] == "https://mcp.example/x"
        # Outside session set-up only the names that look secret are masked.
        assert terminal["params"]["env"] == [
            {"name": "GITHUB_TOKEN", "value": MASK},
            {"name": "LANG", "value": "C.UTF-8"},
        ]
        # Only strings under secret-looking keys: token counts and flags are no secrets,
        # and an object under such a key keeps what is not secret-looking in it.
        assert prompt["params"]["_meta"] == {
            "vendor": {"api_key": MASK, "promptTokens": 812, "authed": True},
            "terminal-auth": {"command": "vendor", "args": ["login"]},
            "trace": 1,
        }
        assert auth["params"] == {"methodId": "vendor", "_meta": MASK}


# Where traces go.


def test_the_default_trace_is_private_and_old_runs_are_pruned(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = home / "traces"
    folder.mkdir(parents=True)
    now = time.time()
    old = [folder / f"tap-2026010{i // 10}T0000{i % 10:02d}Z-1.jsonl" for i in range(25)]
    for age, path in enumerate(reversed(old)):  # old[-1] is the newest
        path.write_text("{}\n")
        os.utime(path, (now - 100 - age, now - 100 - age))
    other = folder / "notes.txt"
    other.write_text("not a trace")
    result = run_tap(tmp_path, agent=[PY, "-c", "pass"])
    assert result.returncode == 0, result.stderr
    left = sorted(p.name for p in folder.iterdir())
    new = [name for name in left if name not in {p.name for p in old} | {other.name}]
    assert len(new) == 1 and new[0].startswith("tap-") and new[0].endswith(".jsonl")
    assert sorted(set(left) - {new[0], other.name}) == sorted(
        p.name for p in old[-(KEEP_RUNS - 1) :]
    )
    assert stat.S_IMODE((folder / new[0]).stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert f"trace {folder / new[0]}" in result.stderr.decode()


def test_old_runs_beyond_fifty_mebibytes_are_pruned(tmp_path: Path) -> None:
    folder = tmp_path / "home" / "traces"
    folder.mkdir(parents=True, mode=0o755)
    now = time.time()
    names = ["tap-a.jsonl", "tap-b.jsonl", "tap-c.jsonl"]  # oldest first
    for age, name in enumerate(reversed(names)):
        with (folder / name).open("wb") as f:
            f.truncate(30 * 1024 * 1024)  # sparse: 30 MiB without writing them
        os.utime(folder / name, (now - 100 - age, now - 100 - age))
    result = run_tap(tmp_path, "--quiet", agent=[PY, "-c", "pass"])
    assert result.returncode == 0, result.stderr
    assert result.stderr == b""
    left = sorted(p.name for p in folder.iterdir())
    assert len(left) == 2 and "tap-c.jsonl" in left  # the newest 30 MiB, and this run
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700  # made private again


def test_a_trace_file_is_created_private_under_a_permissive_umask(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_text("an older trace")
    trace.chmod(0o644)
    done = subprocess.run(
        [
            "sh",
            "-c",
            'umask 000 && exec "$@"',
            "sh",
            *tap_command("--trace", str(trace), agent=[PY, "-c", "pass"]),
        ],
        env=tap_env(tmp_path / "home"),
        capture_output=True,
        timeout=STEP_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(trace.stat().st_mode) == 0o600
    assert "an older trace" not in trace.read_text()


# The agent's process: status, stderr, end of input, signals.


@pytest.mark.parametrize(
    ("agent", "status"),
    [
        ("import sys; sys.exit(3)", 3),
        ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", 128 + signal.SIGTERM),
        ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", 128 + signal.SIGKILL),
        ("pass", 0),
    ],
    ids=["exit-3", "sigterm", "sigkill", "exit-0"],
)
def test_the_agents_exit_status_is_the_taps(tmp_path: Path, agent: str, status: int) -> None:
    result = run_tap(tmp_path, "--quiet", agent=[PY, "-c", agent])
    assert result.returncode == status, result.stderr


def test_the_agents_stderr_passes_through(tmp_path: Path) -> None:
    agent = "import sys; sys.stderr.write('agent says\\x00 hello\\n'); print('out')"
    quiet = run_tap(tmp_path, "--quiet", agent=[PY, "-c", agent])
    assert quiet.stderr == b"agent says\x00 hello\n"
    assert quiet.stdout == b"out\n"
    unchecked = run_tap(tmp_path, "--no-check", agent=[PY, "-c", agent])
    first, rest = unchecked.stderr.split(b"\n", 1)
    assert first.startswith(b"acpwire tap: ") and rest == b"agent says\x00 hello\n"
    # Checked, the line that is not JSON is a violation, said after the start-up line
    # (the agent's own line may come before or after it).
    loud = run_tap(tmp_path, agent=[PY, "-c", agent])
    start, *lines = loud.stderr.decode().splitlines()
    assert start.startswith("acpwire tap: ") and "agent says\x00 hello" in lines
    assert [line for line in lines if line.startswith("acpwire tap: ")] == [
        "acpwire tap: violation [not-json] agent->client line 1: the agent wrote a line that"
        " is not JSON (ACP v1 transports § stdio)",
        "acpwire tap: 1 violation in 1 message (not-json 1)",
    ]


def test_end_of_input_from_the_editor_closes_the_agents_stdin(tmp_path: Path) -> None:
    agent = "import sys; data = sys.stdin.buffer.read(); print(f'eof after {len(data)} bytes')"
    with subprocess.Popen(
        tap_command("--quiet", "--trace", str(tmp_path / "t.jsonl"), agent=[PY, "-c", agent]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=tap_env(tmp_path / "home"),
    ) as tap:
        assert tap.stdin is not None and tap.stdout is not None
        tap.stdin.write(b"12345")
        tap.stdin.flush()
        time.sleep(0.3)
        assert tap.poll() is None  # the agent still reads
        tap.stdin.close()
        assert tap.stdout.read() == b"eof after 5 bytes\n"
        assert tap.wait(timeout=EXIT_TIMEOUT) == 0


def _recorder_of(tap_pid: int) -> int:
    """The pid of the tap's recorder process (a child whose program names it)."""
    deadline = time.monotonic() + EXIT_TIMEOUT
    while time.monotonic() < deadline:
        children = Path(f"/proc/{tap_pid}/task/{tap_pid}/children").read_text().split()
        for pid in children:
            with contextlib.suppress(OSError):
                if b"_recorder_process" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    return int(pid)
        time.sleep(0.05)
    raise AssertionError("the tap has no recorder process")


def test_forwarding_goes_on_when_the_recorder_dies(tmp_path: Path) -> None:
    """The trace is lost, not the session: the tap says so once and keeps forwarding."""
    agent = "import sys\nfor line in sys.stdin: print(line.strip().upper(), flush=True)"
    with subprocess.Popen(
        tap_command("--trace", str(tmp_path / "t.jsonl"), agent=[PY, "-c", agent]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=tap_env(tmp_path / "home"),
    ) as tap:
        assert tap.stdin is not None and tap.stdout is not None and tap.stderr is not None
        tap.stdin.write(b"one\n")
        tap.stdin.flush()
        assert tap.stdout.readline() == b"ONE\n"
        os.kill(_recorder_of(tap.pid), signal.SIGKILL)
        time.sleep(0.2)
        for word in (b"two", b"three"):
            tap.stdin.write(word + b"\n")
            tap.stdin.flush()
            assert tap.stdout.readline() == word.upper() + b"\n"
        tap.stdin.close()
        assert tap.wait(timeout=EXIT_TIMEOUT) == 0
        said = tap.stderr.read().decode()
    assert said.count("the trace recorder stopped") == 1, said


def test_a_missing_command_is_a_usage_error(tmp_path: Path) -> None:
    for options in ((), ("--",), ("--quiet", "--")):
        done = subprocess.run(
            [*ACPWIRE, "tap", *options],
            env=tap_env(tmp_path / "home"),
            capture_output=True,
            timeout=STEP_TIMEOUT,
            check=False,
        )
        assert done.returncode == 2
        (message,) = done.stderr.decode().splitlines()
        assert "acpwire tap" in message and "--" in message


def test_an_agent_that_cannot_start_exits_127(tmp_path: Path) -> None:
    result = run_tap(tmp_path, "--quiet", agent=[str(tmp_path / "no-such-agent")])
    assert result.returncode == 127
    (message,) = result.stderr.decode().splitlines()
    assert message.startswith("acpwire tap: cannot run ")


@contextmanager
def counting_agent(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    count = tmp_path / "count"
    with subprocess.Popen(
        tap_command(
            "--quiet",
            "--trace",
            str(tmp_path / "t.jsonl"),
            agent=[PY, "-c", COUNT_SIGINT, str(count)],
        ),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=tap_env(tmp_path / "home"),
        start_new_session=True,  # the tap's own process group: "the editor's"
    ) as tap:
        try:
            assert tap.stdout is not None
            assert tap.stdout.readline() == b"ready\n"  # the agent's handler is set
            yield tap, count
        finally:
            if tap.poll() is None:
                os.killpg(tap.pid, signal.SIGKILL)


def _wait_for_text(path: Path, timeout: float = EXIT_TIMEOUT) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and (text := path.read_text()):
            return text
        time.sleep(0.02)
    raise AssertionError(f"{path} was never written")


@pytest.mark.parametrize("target", ["tap", "group"], ids=["kill-tap", "ctrl-c-to-the-group"])
def test_a_sigint_reaches_the_agent_exactly_once(tmp_path: Path, target: str) -> None:
    """Sent to the tap, or to the tap's whole process group as a Ctrl-C at a terminal
    is: the agent, in a group of its own, gets it once, through the tap."""
    with counting_agent(tmp_path) as (tap, count):
        if target == "tap":
            os.kill(tap.pid, signal.SIGINT)
        else:
            os.killpg(tap.pid, signal.SIGINT)
        assert _wait_for_text(count) == "1"
        time.sleep(0.3)  # a second delivery would have come by now
        assert count.read_text() == "1"
        assert tap.poll() is None  # the tap goes on while the agent does
        assert tap.stdin is not None
        tap.stdin.close()
        assert tap.wait(timeout=EXIT_TIMEOUT) == 0
    assert count.read_text() == "1 at exit"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_are_forwarded_and_the_status_follows(
    tmp_path: Path, signum: signal.Signals
) -> None:
    with counting_agent(tmp_path) as (tap, _):
        os.kill(tap.pid, signum)
        assert tap.wait(timeout=EXIT_TIMEOUT) == 128 + signum


# Start-up: the tap loads no backend and no pydantic; its recorder process checks.

LIGHT_TAP = """
import atexit, json, sys
atexit.register(lambda: sys.stderr.write("MODULES " + json.dumps(sorted(sys.modules)) + "\\n"))
from acpwire.cli import main
agent = [sys.executable, "-c", sys.argv[2]]
raise SystemExit(main(["tap", "--quiet", "--trace", sys.argv[1], "--", *agent]))
"""
HEAVY = (
    "acp_v1",
    "pydantic",
    "anyio",
    "asyncio",
    "httpx",
    "acpwire.server",
    "acpwire.config.settings",
)
TAP_MODULES = [
    "acpwire",
    "acpwire._exports",
    "acpwire._version",
    "acpwire.cli",
    "acpwire.cli._parser",
    "acpwire.cli.tap",
    "acpwire.cli.tap._files",
    "acpwire.cli.tap._mask",
    "acpwire.cli.tap._recorder_process",
    "acpwire.cli.tap._trace",
    # The configuration's package (lazy: it imports nothing) and its two stdlib leaves.
    "acpwire.config",
    "acpwire.config.home",
    "acpwire.config.secret_names",
]


def _tap_modules(tmp_path: Path, agent: str) -> list[str]:
    done = subprocess.run(
        [PY, "-c", LIGHT_TAP, str(tmp_path / "t.jsonl"), agent],
        env=tap_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=STEP_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    modules: list[str] = json.loads(done.stderr.split("MODULES ", 1)[1])
    return modules


def test_the_tap_starts_without_the_backend(tmp_path: Path) -> None:
    """The tap runs on the standard library alone."""
    modules = _tap_modules(tmp_path, "pass")
    assert [m for m in modules if m.startswith(HEAVY)] == []
    assert sorted(m for m in modules if m.startswith("acpwire")) == TAP_MODULES


def test_the_recorder_process_checks_and_the_tap_never_loads_the_checker(
    tmp_path: Path,
) -> None:
    """Parsing and checking happen in the recorder's own process (they would hold the
    forwarding threads back in the tap's): the tap forwards a message, the checker's
    finding is in the trace, and the tap itself loaded neither it nor pydantic."""
    modules = _tap_modules(tmp_path, 'print(\'{"jsonrpc":"2.0","method":"_x/ping"}\')')
    assert [m for m in modules if m.startswith(HEAVY)] == []
    assert sorted(m for m in modules if m.startswith("acpwire")) == TAP_MODULES
    record, summary = read_trace(tmp_path / "t.jsonl")
    assert record["info"][0]["rule"] == "extension-method"
    assert summary["kind"] == "summary" and summary["counts"]["violations"] == {}
