"""Driving acpwire with acpx, the headless ACP client from npm (a client nobody here wrote).

``make interop-deps`` (run by ``.ci/run``) installs the pinned :data:`ACPX_VERSION` (the
Makefile's ``ACPX_VERSION``, kept equal) into
``tests/interop/.npm`` (git-ignored). :class:`Acpx` runs it against ``python -m acpwire``
with a config home pointing at a loopback model server; acpx keeps its own state in
``$HOME/.acpx``, so each test gets a home of its own.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ACPX_VERSION = "0.19.1"
PREFIX = Path(__file__).resolve().parent / ".npm"
ACPX = PREFIX / "node_modules" / ".bin" / "acpx"
RUN_TIMEOUT_S = 120.0


def missing() -> str | None:
    """Why acpx cannot be run here, or None."""
    if shutil.which("node") is None:
        return "Node.js is not installed (acpx needs node)"
    if not ACPX.exists():
        return f"acpx {ACPX_VERSION} is not installed in {PREFIX}: run `make interop-deps`"
    manifest = PREFIX / "node_modules" / "acpx" / "package.json"
    version = json.loads(manifest.read_text(encoding="utf-8")).get("version")
    if version != ACPX_VERSION:
        return (
            f"acpx {version} is installed in {PREFIX}, not {ACPX_VERSION}: run `make interop-deps`"
        )
    return None


@dataclass
class Acpx:
    """acpx runs against acpwire in ``work`` with acpwire's config home ``home``."""

    work: Path
    home: Path
    user_home: Path

    @classmethod
    def make(cls, root: Path, base_url: str) -> Acpx:
        work, home, user_home = root / "work", root / "acpwire-home", root / "user"
        for path in (work, home, user_home):
            path.mkdir(parents=True, exist_ok=True)
        (home / "config.toml").write_text(
            f'[model]\nbase_url = "{base_url}"\nmodel = "fake-model"\ncontext_window = 32768\n',
            encoding="utf-8",
        )
        return cls(work.resolve(), home, user_home)

    @property
    def env(self) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.user_home),
            "LANG": "C.UTF-8",
            "ACPWIRE_HOME": str(self.home),
            "ACPWIRE_AGENT": "default",
        }

    def argv(self, *args: str) -> list[str]:
        agent = shlex.join([sys.executable, "-m", "acpwire"])
        # --ttl: a persistent session's owner process (and its acpwire) ends soon when idle.
        return [str(ACPX), "--agent", agent, "--cwd", str(self.work), "--ttl", "30", *args]

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.argv(*args),
            env=self.env,
            cwd=self.work,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )

    def start(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.argv(*args),
            env=self.env,
            cwd=self.work,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
