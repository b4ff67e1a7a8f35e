"""Helpers for the sandbox tests: a user home outside ``/tmp``, a git workspace, a loopback
receiver for exfiltration attempts, and the processes still running with a marker.

The user home lives outside ``/tmp`` (``ACPWIRE_TEST_OUTSIDE``, default ``/var/tmp``) so
that what the sandbox protects there is protected by its read-only rule, not by the
sandbox's private ``/tmp``.
"""

from __future__ import annotations

import http.server
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from acpwire.sandbox import BWRAP_ENV, sandbox_status


def require_sandbox() -> None:
    status = sandbox_status()
    if not status.available:
        pytest.skip(f"bubblewrap cannot sandbox here: {status.reason}")


def no_sandbox(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A machine without bubblewrap: the sandbox binary named does not exist."""
    monkeypatch.setenv(BWRAP_ENV, str(tmp_path / "no-such-bwrap"))


@contextmanager
def user_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``$HOME`` for the test: outside /tmp, with a private key and a sentinel file."""
    base = os.environ.get("ACPWIRE_TEST_OUTSIDE", "/var/tmp")
    home = Path(tempfile.mkdtemp(prefix="acpwire-home-", dir=base)).resolve()
    try:
        (home / ".ssh").mkdir()
        (home / ".ssh" / "id_rsa").write_text("PRIVATE-KEY-MATERIAL\n")
        (home / "notes.txt").write_text("keep me\n")
        monkeypatch.setenv("HOME", str(home))
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


def git_workspace(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


class Receiver:
    """A loopback HTTP server recording every request body it gets."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        received = self.bodies

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                received.append(self.rfile.read(length))
                self.send_response(200)
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                return None

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def processes_with(marker: str) -> list[int]:
    """Pids whose command line contains ``marker`` (zombies excluded)."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        with suppress(OSError):
            os.kill(pid, 9)
