"""The ``[tools]`` table of config.toml: the tools' caps, with defaults and checked values."""

from __future__ import annotations

from pathlib import Path

import pytest

from acpwire.config import ConfigError, load_settings
from acpwire.config.limits import ToolLimits


def _load(home: Path, text: str) -> ToolLimits:
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(text)
    return load_settings({"ACPWIRE_HOME": str(home)}, load_env_file=False).tools


def test_tools_caps_have_defaults_and_can_be_set(tmp_path: Path) -> None:
    assert _load(tmp_path / "a", "") == ToolLimits()
    limits = _load(
        tmp_path / "b",
        "[tools]\nmax_file_bytes = 1000\nmax_result_chars = 500\nsearch_timeout_s = 2.5\n"
        "max_attachments_bytes = 4096\n",
    )
    assert limits == ToolLimits(
        max_file_bytes=1000,
        max_result_chars=500,
        search_timeout_s=2.5,
        max_attachments_bytes=4096,
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[tools]\nmax_read = 1\n", "unknown key tools.max_read"),
        ("[tools]\nmax_file_bytes = 0\n", "tools.max_file_bytes must be a positive number"),
        ('[tools]\nsearch_timeout_s = "x"\n', "tools.search_timeout_s must be a positive"),
        ("tools = 3\n", "[tools] must be tables"),
    ],
)
def test_bad_tools_values_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace(".", r"\.")):
        _load(tmp_path / "home", text)
