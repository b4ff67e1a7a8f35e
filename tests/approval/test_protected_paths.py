"""The protected list: names, home-relative places, config homes and what only the disk
knows (worktree git dirs, bare repositories, core.hooksPath), with a fake HOME."""

from __future__ import annotations

from pathlib import Path

import pytest

from acpwire.approval import is_sensitive, protected_dirs, protected_reason
from tests.support.homes import isolated_home


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolated_home(tmp_path, monkeypatch)


@pytest.mark.parametrize(
    ("relative", "protected"),
    [
        (".bashrc", True),
        (".BASH_PROFILE", True),
        (".zshenv", True),
        (".gitconfig", True),
        (".config/fish/conf.d/x.fish", True),
        (".config/autostart/a.desktop", True),
        (".config/systemd/user/a.service", True),
        (".local/share/systemd/user/a.timer", True),
        (".config/git/config", True),
        (".aws/credentials", True),
        (".bashrc.d.txt", False),
        ("notes/profile", False),
        ("projects/app/main.py", False),
    ],
)
def test_home_places(home: Path, relative: str, protected: bool) -> None:
    assert (is_sensitive(home / relative) is not None) is protected


def test_config_homes_and_system_places(home: Path, tmp_path: Path) -> None:
    assert "config home" in (is_sensitive(tmp_path / "cfg" / "config.toml") or "")
    assert "config home" in (is_sensitive(tmp_path / "hermes" / "config.yaml") or "")
    assert "config home" in (is_sensitive("/srv/x/config.toml", homes=["/srv/x"]) or "")
    assert is_sensitive("/var/spool/cron/crontabs/me") is not None
    assert is_sensitive("/etc/cron.d/job") is not None
    for name in (".envrc.local", ".envs/a", ".husky/pre-commit", ".vscode/tasks.json", ".IDEA/x"):
        assert is_sensitive(f"/p/{name}") is not None, name
    assert is_sensitive("/p/.environment") is None


def test_what_the_disk_knows(home: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    main = tmp_path / "main.git"
    (main / "worktrees" / "w").mkdir(parents=True)
    (main / "objects").mkdir()
    (main / "refs").mkdir()
    (main / "HEAD").write_text("ref: refs/heads/main\n")
    (main / "worktrees" / "w" / "commondir").write_text("../..\n")
    (main / "config").write_text("[core]\n\tbare = false\n[CORE]\n\thooksPath = tools/hooks\n")
    work.mkdir()
    (work / ".git").write_text("gitdir: ../main.git/worktrees/w\n")
    (work / "tools" / "hooks").mkdir(parents=True)
    (work / ".vscode").mkdir()
    assert protected_reason(work / "src" / "a.py") is None
    assert protected_reason(work / "tools" / "hooks" / "pre-commit") is not None
    assert protected_reason(main / "hooks" / "post-update") is not None
    dirs = protected_dirs(work)
    for expected in (main / "worktrees" / "w", main, work / "tools" / "hooks", work / ".vscode"):
        assert expected.resolve() in dirs, expected
