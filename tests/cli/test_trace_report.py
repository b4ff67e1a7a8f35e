"""``acpwire trace report``: a real trace (the tap in front of ``acpwire`` serving its
embedded agent against the loopback model), read back as a page, Markdown and JSON.

The page is opened in a real headless browser (Debian's Chromium; the test skips, saying
why, where it is not installed): it loads with no console error, its script ran (it
marks the page ready and counts what it shows), the assertions read its DOM, and a
screenshot is kept in ``tests/.artefacts/`` (git-ignored).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.stdio.stdio_support import (
    ACPWIRE,
    STEP_TIMEOUT,
    child_env,
    raw_child,
    request,
    write_home,
)
from tests.support.fake_llm import FakeLLM

pytestmark = [pytest.mark.subprocess, pytest.mark.anyio]

ARTEFACTS = Path(__file__).resolve().parents[1] / ".artefacts"
HOSTILE = "<script>document.title='pwned'</script><img src=x onerror=alert(1)>"
"""A prompt that would run in the page if the report did not escape what it shows."""
VIOLATION = {
    "rule": "update-after-prompt",
    "message": "session/update sent after the prompt's response",
    "spec": "prompt-turn",
}


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


async def _traced_session(tmp_path: Path) -> Path:
    """A trace of initialize, session/new and one streamed prompt through the tap, plus
    one record reporting a violation on the last update (as the tap's checks write it)."""
    trace, work = tmp_path / "trace.jsonl", tmp_path / "work"
    work.mkdir()
    with FakeLLM(rules=[{"match": "hello", "text": "Hi from the model.", "chunks": 4}]) as llm:
        home = write_home(tmp_path / "home", llm.base_url)
        command = (*ACPWIRE, "tap", "--trace", str(trace), "--quiet", "--", *ACPWIRE)
        async with raw_child(command, env=child_env(home), stderr_path=tmp_path / "err") as peer:
            with anyio.fail_after(STEP_TIMEOUT):
                caps = {"fs": {"readTextFile": True, "writeTextFile": False}}
                init = {
                    "protocolVersion": 1,
                    "clientCapabilities": caps,
                    "clientInfo": {"name": "report-test", "version": "1.0"},
                }
                await peer.send_bytes(_line(request(1, "initialize", init)))
                await peer.wait_for(lambda m: m.get("id") == 1)
                await peer.send_bytes(
                    _line(request(2, "session/new", {"cwd": str(work), "mcpServers": []}))
                )
                made = await peer.wait_for(lambda m: m.get("id") == 2)
                sid = made["result"]["sessionId"]
                prompt = {
                    "sessionId": sid,
                    "prompt": [{"type": "text", "text": f"hello {HOSTILE}"}],
                }
                await peer.send_bytes(_line(request(3, "session/prompt", prompt)))
                await peer.wait_for(lambda m: m.get("id") == 3)
            assert await peer.finish() == 0
    records = [json.loads(x) for x in trace.read_text(encoding="utf-8").splitlines()]
    last_update = max(i for i, r in enumerate(records) if r.get("method") == "session/update")
    records[last_update]["violations"] = [VIOLATION]
    trace.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return trace


def _report(trace: Path, out: Path, fmt: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*ACPWIRE, "trace", "report", str(trace), "-o", str(out), "--format", fmt],
        capture_output=True,
        text=True,
        timeout=STEP_TIMEOUT,
        check=False,
    )
    if done.returncode in (0, 1):  # the report shows what the trace holds: as private
        assert out.stat().st_mode & 0o777 == 0o600
    return done


class _Dom(HTMLParser):
    """The attributes of ``<body>``, the ``id``s and classes seen, and the text of ids."""

    def __init__(self) -> None:
        super().__init__()
        self.body: dict[str, str | None] = {}
        self.classes: list[str] = []
        self.scripts = 0
        self.text: dict[str, str] = {}
        self._open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "body":
            self.body = found
        if tag == "script":
            self.scripts += 1
        self.classes += (found.get("class") or "").split()
        if found.get("id"):
            self._open.append(str(found["id"]))
            self.text.setdefault(str(found["id"]), "")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("pre", "section", "div") and self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for name in self._open:
            self.text[name] += data


async def test_a_report_shows_the_sessions_handshake_latency_and_violations(
    tmp_path: Path,
) -> None:
    trace = await _traced_session(tmp_path)
    page, md, js = tmp_path / "report.html", tmp_path / "report.md", tmp_path / "report.json"
    for out, fmt in ((page, "html"), (md, "md"), (js, "json")):
        done = _report(trace, out, fmt)
        assert done.returncode == 0, done.stderr
    data = json.loads(js.read_text(encoding="utf-8"))
    assert data["handshake"]["client"]["clientInfo"] == {"name": "report-test", "version": "1.0"}
    assert data["handshake"]["agent"]["agentInfo"]["name"] == "acpwire"
    names = [x["name"] for x in data["latencies"]]
    assert names[:2] == ["initialize", "session/new"]
    assert {"time to first update", "prompt"} <= set(names)
    assert all(x["seconds"] is not None and x["seconds"] >= 0 for x in data["latencies"])
    (session,) = [s for s in data["sessions"] if s != "(connection)"]
    assert data["sessions"][session] >= 4  # session/new both ways, the prompt, its updates
    assert data["violation_counts"] == {"update-after-prompt": 1}
    assert data["unanswered"] == []
    text = md.read_text(encoding="utf-8")
    assert "update-after-prompt" in text and f"### Session {session}" in text
    html = page.read_text(encoding="utf-8")
    assert HOSTILE not in html and "&lt;script&gt;document.title" in html  # escaped
    assert "default-src 'none'" in html  # nothing may be fetched: it opens from a file
    assert not any(f'{attr}="http' in html for attr in ("src", "href"))


async def test_the_report_page_loads_in_a_real_browser_without_errors(tmp_path: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no Chromium here (apt-get install chromium): the page is not opened")
    trace = await _traced_session(tmp_path)
    page = tmp_path / "report.html"
    assert _report(trace, page, "html").returncode == 0
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'chromium'}",
        "--enable-logging=stderr",
        "--v=0",
    ]
    dumped = subprocess.run(
        [browser, *flags, "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    console = [line for line in dumped.stderr.splitlines() if "CONSOLE" in line]
    assert console == [], console  # no script error, no blocked fetch, nothing logged
    dom = _Dom()
    dom.feed(dumped.stdout)
    assert dom.body.get("data-ready") == "1"  # the page's script ran to its end
    shown = int(dom.body.get("data-messages") or 0)
    records = [json.loads(x) for x in trace.read_text(encoding="utf-8").splitlines()]
    assert shown == len([r for r in records if r["dir"] is not None])  # not the summary
    assert dom.body.get("data-violations") == "1"
    assert dom.classes.count("violation") == 1
    assert "report-test" in dom.text["client-side"] and '"acpwire"' in dom.text["agent-side"]
    assert "update-after-prompt" in dom.text["violations"]
    assert "pwned" not in dumped.stdout.split("<title>")[1].split("</title>")[0]
    ARTEFACTS.mkdir(exist_ok=True)
    shot = ARTEFACTS / "trace-report.png"
    shot.unlink(missing_ok=True)
    taken = subprocess.run(
        [browser, *flags, "--window-size=1280,1600", f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert taken.returncode == 0 and shot.stat().st_size > 10_000, taken.stderr[-2000:]


def test_a_broken_trace_is_read_and_its_unanswered_requests_fail_the_check(
    tmp_path: Path,
) -> None:
    """Garbage lines are counted, not fatal; a request never answered is a latency that
    says so and, with ``--fail-on-violations``, exit code 1; a missing file is exit 2."""
    trace = tmp_path / "broken.jsonl"
    asked = request(7, "session/prompt", {"sessionId": "s1", "prompt": []})
    trace.write_text(
        "not json\n"
        + json.dumps({"t": 0.5, "dir": "client->agent", "raw": json.dumps(asked),
                      "method": "session/prompt", "id": 7, "kind": "request"})
        + "\n[1, 2]\n",
        encoding="utf-8",
    )  # fmt: skip
    out = tmp_path / "r.json"
    done = subprocess.run(
        [*ACPWIRE, "trace", "report", str(trace), "--format", "json", "-o", str(out),
         "--fail-on-violations"],
        capture_output=True, text=True, timeout=STEP_TIMEOUT, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["unreadable_lines"] == 2
    assert data["unanswered"] == [
        {"index": 0, "method": "session/prompt", "id": 7, "direction": "client->agent"}
    ]
    assert data["latencies"] == [
        {"name": "session/prompt", "session": "s1", "seconds": None, "detail": "never answered"}
    ]
    missing = _report(tmp_path / "nope.jsonl", tmp_path / "x.html", "html")
    assert missing.returncode == 2
    assert missing.stderr.startswith("acpwire trace report: cannot read")


def test_a_trace_of_acpwire_check_is_refused_saying_what_reads_it(tmp_path: Path) -> None:
    """acpwire check --trace holds several agent processes by check: not read as one
    connection (a report of nulls and no violations, which --fail-on-violations would
    pass), but refused with what to use instead."""
    trace = tmp_path / "check-trace.jsonl"
    asked = request(1, "initialize", {"protocolVersion": 1})
    record = {"t": 0.01, "dir": "client->agent", "raw": json.dumps(asked),
              "check": "initialize", "agent": "main"}  # fmt: skip
    trace.write_text(json.dumps(record) + "\n", encoding="utf-8")
    done = _report(trace, tmp_path / "r.html", "html")
    assert done.returncode == 2
    assert done.stderr == (
        f"acpwire trace report: {trace} is a trace of acpwire check (several agent processes, "
        "by check), not of acpwire tap: the check's own report says what failed and why "
        f"(acpwire check --format md), and its lines are JSON (jq 'select(.check == \"prompt\")'"
        f" {trace})\n"
    )
    assert not (tmp_path / "r.html").exists()
