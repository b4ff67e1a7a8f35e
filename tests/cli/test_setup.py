"""``acpwire --setup``: proposes the endpoint, lists its models, saves config.toml and .env."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from acpwire.cli.setup import run_setup
from acpwire.config import Settings, load_settings
from tests.support.fake_llm import FakeLLM


def _answers(*values: str) -> tuple[list[str], Callable[[str], str]]:
    asked: list[str] = []
    it: Iterator[str] = iter(values)

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return next(it)

    return asked, ask


def test_setup_saves_endpoint_model_and_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    home = tmp_path / "home"
    with FakeLLM(models=["small", "large"]) as llm:
        asked, ask = _answers(llm.base_url, "sk-test", "large")
        code = run_setup(Settings(home=home), ask=ask)
    assert code == 0
    assert len(asked) == 3
    config = tomllib.loads((home / "config.toml").read_text())
    assert config["model"] == {"base_url": llm.base_url, "model": "large"}
    env = (home / ".env").read_text()
    assert "OPENAI_API_KEY=sk-test" in env
    assert (home / ".env").stat().st_mode & 0o077 == 0  # the key is private
    settings = load_settings({"ACPWIRE_HOME": str(home)}, load_env_file=False)
    assert settings.file_values["model"] == "large"


def test_setup_keeps_other_tables_and_defaults_to_the_first_listed_model(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("[backend]\napproval_timeout_s = 30\n")
    with FakeLLM(models=["first", "second"]) as llm:
        _, ask = _answers(llm.base_url, "", "")
        assert run_setup(Settings(home=home), ask=ask) == 0
    config = tomllib.loads((home / "config.toml").read_text())
    assert config["model"]["model"] == "first"
    assert config["backend"]["approval_timeout_s"] == 30
    assert not (home / ".env").exists()


def test_setup_without_an_endpoint_saves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setattr("acpwire.cli.setup.discover_local_server", lambda: None)
    home = tmp_path / "home"
    _, ask = _answers("")
    assert run_setup(Settings(home=home), ask=ask) == 1
    assert not (home / "config.toml").exists()
