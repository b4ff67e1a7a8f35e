"""The config home is private whatever the umask: the real ``acpwire`` process and
``--setup`` run under umask 022 create the home 0700 and ``config.toml``, ``.env``,
``sessions.db`` (and its -wal/-shm) 0600, and a start repairs broader modes with a
warning on stderr."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from acpwire.cli.setup import run_setup
from acpwire.config import Settings
from tests.stdio.stdio_support import ACPWIRE, STEP_TIMEOUT, child_env, raw_child, write_home
from tests.support.fake_llm import FakeLLM

pytestmark = [pytest.mark.subprocess, pytest.mark.anyio]

UMASK_022 = ("sh", "-c", 'umask 022 && exec "$0" "$@"')
"""Runs the command after it with umask 022, as a user's login shell usually has it."""


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@contextmanager
def umask(value: int) -> Iterator[None]:
    old = os.umask(value)
    try:
        yield
    finally:
        os.umask(old)


def init_params() -> dict[str, object]:
    return {"protocolVersion": 1, "clientCapabilities": {}}


async def test_a_new_home_and_database_are_private_under_umask_022(tmp_path: Path) -> None:
    home = tmp_path / "home"
    work = tmp_path / "work"
    work.mkdir()
    with FakeLLM(models=["fake-model"]) as llm:
        env = {**child_env(home), "OPENAI_BASE_URL": llm.base_url, "ACPWIRE_MODEL": "fake-model"}
        stderr = tmp_path / "stderr.log"
        async with raw_child((*UMASK_022, *ACPWIRE), env=env, stderr_path=stderr) as peer:
            with anyio.fail_after(STEP_TIMEOUT):
                assert "result" in await peer.call("initialize", init_params())
                answer = await peer.call("session/new", {"cwd": str(work), "mcpServers": []})
                assert "result" in answer, answer
                # While the process holds the database open, its WAL files exist.
                wal, shm = home / "sessions.db-wal", home / "sessions.db-shm"
                assert wal.exists() and shm.exists()
                assert (mode(home), mode(home / "sessions.db")) == (0o700, 0o600)
                assert (mode(wal), mode(shm)) == (0o600, 0o600)
                assert await peer.finish() == 0
    assert "readable by others" not in stderr.read_text()


def test_setup_writes_config_and_key_private_under_umask_022(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    with FakeLLM(models=["m1"]) as llm, umask(0o022):
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        assert run_setup(Settings(home=home), assume_yes=True) == 0
    assert mode(home) == 0o700
    assert mode(home / "config.toml") == 0o600
    assert mode(home / ".env") == 0o600
    assert "sk-secret" in (home / ".env").read_text()


async def test_broad_modes_are_repaired_at_start_with_a_warning(tmp_path: Path) -> None:
    home = write_home(tmp_path / "home", "http://127.0.0.1:9/v1")
    (home / ".env").write_text("OPENAI_API_KEY=sk-secret\n")
    (home / "sessions.db").write_bytes(b"")
    home.chmod(0o755)
    for name in ("config.toml", ".env", "sessions.db"):
        (home / name).chmod(0o644)
    stderr = tmp_path / "stderr.log"
    async with raw_child((*UMASK_022, *ACPWIRE), env=child_env(home), stderr_path=stderr) as peer:
        with anyio.fail_after(STEP_TIMEOUT):
            assert "result" in await peer.call("initialize", init_params())
            assert await peer.finish() == 0
    assert mode(home) == 0o700
    assert {name: mode(home / name) for name in ("config.toml", ".env", "sessions.db")} == {
        "config.toml": 0o600,
        ".env": 0o600,
        "sessions.db": 0o600,
    }
    log = stderr.read_text()
    for name in ("config.toml", ".env", "sessions.db"):
        assert f"{home / name} was readable by others (mode 644); set to 600" in log
    assert f"{home} was readable by others (mode 755); set to 700" in log
