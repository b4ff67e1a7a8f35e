"""Security table for decide_edit: real directories and symlinks under tmp_path."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from acpwire.agent.seam import EditProposal
from acpwire.approval import (
    EditPolicy,
    decide_edit,
    decide_edits,
    is_sensitive,
    policy_for_mode,
)


@dataclass(frozen=True)
class Layout:
    root: Path
    proj: Path
    extra: Path
    outside: Path
    systmp: Path
    home: Path

    def fmt(self, text: str) -> str:
        return text.format(
            root=self.root,
            proj=self.proj,
            extra=self.extra,
            outside=self.outside,
            systmp=self.systmp,
            home=self.home,
        )


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Layout:
    root = tmp_path.resolve()
    proj, extra, outside = root / "proj", root / "extra", root / "outside"
    systmp, home = root / "systmp", root / "home"
    for directory in (proj / "src", proj / ".git", extra, outside, systmp, home):
        directory.mkdir(parents=True)
    (proj / "src" / "a.py").write_text("x = 1\n", encoding="utf-8")
    (proj / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (proj / ".env").write_text("KEY=1\n", encoding="utf-8")
    (outside / "secret.txt").write_text("secret\n", encoding="utf-8")
    (proj / "link_out").symlink_to(outside / "secret.txt")
    (proj / "linkdir").symlink_to(outside, target_is_directory=True)
    (proj / "dangling").symlink_to(outside / "not-yet.txt")
    (proj / "notes.txt").symlink_to(proj / ".env")
    (proj / "gitlink").symlink_to(proj / ".git", target_is_directory=True)
    (outside / "keystore").mkdir()
    (proj / ".ssh").symlink_to(outside / "keystore", target_is_directory=True)
    (proj / "inner_link").symlink_to(proj / "src", target_is_directory=True)
    (root / "proj-evil").mkdir()
    monkeypatch.setenv("HOME", str(home))
    # Decisions must not depend on the process cwd.
    monkeypatch.chdir(outside)
    return Layout(root, proj, extra, outside, systmp, home)


@dataclass(frozen=True)
class Row:
    path: str
    policy: EditPolicy
    approve: bool
    reason: str = ""
    cwd: str = "{proj}"
    wsl: bool = False
    extra_sensitive: tuple[str, ...] = ()


W: EditPolicy = "workspace"
A: EditPolicy = "ask"
S: EditPolicy = "session"
WIN_CWD = "C:\\Users\\me\\proj"

ROWS: dict[str, Row] = {
    "inside, workspace": Row("src/a.py", W, True, "inside the session cwd"),
    "inside, ask": Row("src/a.py", A, False, "asked in this mode"),
    "inside, session": Row("src/a.py", S, True),
    "absolute inside": Row("{proj}/src/a.py", W, True),
    "nonexistent nested dirs": Row("new/deep/er/file.py", W, True),
    "symlink dir inside the workspace": Row("inner_link/b.py", W, True),
    "dot-dot traversal": Row("../outside/secret.txt", W, False, "outside the workspace"),
    "dot-dot inside a path": Row("src/../../outside/x.txt", W, False, "outside"),
    "absolute elsewhere": Row("{outside}/x.txt", W, False, "outside"),
    "absolute elsewhere, session": Row("{outside}/x.txt", S, True),
    "system file": Row("/etc/hosts", W, False, "outside"),
    "sibling sharing the cwd prefix": Row("{root}/proj-evil/x", W, False, "outside"),
    "file symlink pointing out": Row("link_out", W, False, "outside"),
    "dir symlink pointing out": Row("linkdir/new.txt", W, False, "outside"),
    "dangling symlink pointing out": Row("dangling", W, False, "outside"),
    "temp dir": Row("{systmp}/scratch/out.txt", W, True, "temp dir"),
    "additional directory": Row("{extra}/b.txt", W, True, "additional directory"),
    ".git/config, workspace": Row(".git/config", W, False, "inside a .git directory"),
    ".git/config, session": Row(".git/config", S, False, "sensitive"),
    ".git via symlink": Row("gitlink/config", S, False, ".git"),
    ".Git case variant": Row(".Git/HEAD", S, False, ".git"),
    ".ssh in home": Row("{home}/.ssh/authorized_keys", S, False, ".ssh"),
    ".ssh symlinked out of sight": Row(".ssh/id_backup", S, False, ".ssh"),
    ".ssh in temp dir": Row("{systmp}/.ssh/x", W, False, ".ssh"),
    ".ENV upper case": Row(".ENV", S, False, "environment file"),
    ".env.production": Row("deploy/.env.production", S, False, "environment file"),
    ".env behind an innocent symlink": Row("notes.txt", S, False, "environment file"),
    "id_rsa": Row("keys/id_rsa", S, False, "private key"),
    "id_ed25519 in temp": Row("{systmp}/id_ed25519", W, False, "private key"),
    "*.PEM": Row("certs/server.PEM", S, False, "private key"),
    "*.key": Row("tls/site.key", W, False, "private key"),
    "extra glob on the name": Row("certs/a.P7B", S, False, "*.p7b", extra_sensitive=("*.p7b",)),
    "extra glob on the path": Row(
        "secrets/db.txt", S, False, "*/secrets/*", extra_sensitive=("*/secrets/*",)
    ),
    "extra glob not matching": Row("src/a.py", W, True, extra_sensitive=("*.p12",)),
    "home ~/x, workspace": Row("~/x.txt", W, False, "outside"),
    "home ~/x, session": Row("~/x.txt", S, True),
    "case variant of the workspace": Row("{root}/PROJ/src/a.py", W, False, "outside"),
    "file URI inside": Row("file://{proj}/src/a.py", W, True),
    "percent-encoded .git in a file URI": Row("file://{proj}/%2Egit/config", S, False, ".git"),
    "Windows path inside under WSL": Row(WIN_CWD + "\\src\\a.py", W, True, cwd=WIN_CWD, wsl=True),
    "Windows relative path under WSL": Row("src\\b.py", W, True, cwd=WIN_CWD, wsl=True),
    "Windows traversal under WSL": Row(
        "..\\..\\other\\x.py", W, False, "outside", cwd=WIN_CWD, wsl=True
    ),
    "Windows path elsewhere under WSL": Row(
        "C:\\Windows\\System32\\x.dll", W, False, "outside", cwd=WIN_CWD, wsl=True
    ),
    "Windows .ssh under WSL": Row(
        "C:\\Users\\me\\.SSH\\config", S, False, ".ssh", cwd=WIN_CWD, wsl=True
    ),
    "empty path": Row("", S, False, "cannot resolve"),
    "NUL in path": Row("src/a\x00.py", S, False, "cannot resolve"),
}


@pytest.mark.parametrize("row", list(ROWS.values()), ids=list(ROWS))
def test_decide_edit_table(layout: Layout, row: Row) -> None:
    decision = decide_edit(
        layout.fmt(row.path),
        cwd=layout.fmt(row.cwd),
        workspace_roots=[str(layout.extra)],
        policy=row.policy,
        extra_sensitive=row.extra_sensitive,
        temp_dir=str(layout.systmp),
        wsl=row.wsl,
    )
    assert decision.auto_approve is row.approve, decision
    assert row.reason in decision.reason
    if row.reason.startswith("cannot resolve"):
        assert decision.resolved_path is None
    else:
        assert decision.resolved_path is not None and decision.resolved_path.is_absolute()


def test_resolution_uses_session_cwd_and_follows_links(layout: Layout) -> None:
    inside = decide_edit("src/a.py", cwd=str(layout.proj), policy="ask", temp_dir="/nonexistent")
    assert inside.resolved_path == layout.proj / "src" / "a.py"
    linked = decide_edit("linkdir/n.txt", cwd=str(layout.proj), policy="session")
    assert linked.resolved_path == layout.outside / "n.txt"
    wsl = decide_edit("src\\b.py", cwd=WIN_CWD, policy="ask", wsl=True)
    assert wsl.resolved_path == Path("/mnt/c/Users/me/proj/src/b.py")


def test_default_temp_dir_is_the_system_one(layout: Layout) -> None:
    import tempfile

    target = Path(tempfile.gettempdir()) / "acpwire-scratch.txt"
    decision = decide_edit(str(target), cwd=str(layout.proj), policy="workspace")
    assert decision.auto_approve, decision


def test_bad_policy_and_bad_roots(layout: Layout) -> None:
    with pytest.raises(ValueError, match="edit policy"):
        decide_edit("a.py", cwd=str(layout.proj), policy="yolo")  # type: ignore[arg-type]  # bad input on purpose
    # A relative additional directory grants nothing (logged), it does not widen the workspace.
    decision = decide_edit(
        f"{layout.outside}/x",
        cwd=str(layout.proj),
        workspace_roots=["outside"],
        policy="workspace",
        temp_dir=str(layout.systmp),
    )
    assert not decision.auto_approve


def test_multi_file_edit_needs_every_file(layout: Layout) -> None:
    cwd, tmp = str(layout.proj), str(layout.systmp)
    ok = decide_edits(
        [EditProposal("src/a.py", "x = 1\n", "x = 2\n"), "src/new.py"],
        cwd=cwd,
        policy="workspace",
        temp_dir=tmp,
    )
    assert ok.auto_approve and len(ok.decisions) == 2
    mixed = decide_edits(
        ["src/a.py", "../outside/x.txt", ".env"], cwd=cwd, policy="workspace", temp_dir=tmp
    )
    assert not mixed.auto_approve
    assert [d.auto_approve for d in mixed.decisions] == [True, False, False]
    assert mixed.reason == f"{layout.outside / 'x.txt'}: outside the workspace"
    session = decide_edits(["src/a.py", f"{layout.outside}/y"], cwd=cwd, policy="session")
    assert session.auto_approve
    with_secret = decide_edits(["src/a.py", ".env"], cwd=cwd, policy="session")
    assert not with_secret.auto_approve
    assert "environment file" in with_secret.reason
    with pytest.raises(ValueError, match="at least one file"):
        decide_edits([], cwd=cwd, policy="session")


@pytest.mark.parametrize(
    ("path", "sensitive"),
    [
        ("/p/.gitignore", False),
        ("/p/.github/workflows/ci.yml", False),
        ("/p/id_rsa.pub", False),
        ("/p/x.env", False),
        ("/p/.environment", False),
        ("/p/keyboard.txt", False),
        ("/p/.env.example", True),
        ("/p/id_ECDSA", True),
        ("/p/id_dsa", True),
        ("C:\\Users\\me\\.ssh\\known_hosts", True),
        ("/p/.git", True),
        # direnv runs .envrc as shell code; other .env spellings hold secrets too
        ("/p/.envrc", True),
        ("/p/.env-local", True),
        ("/p/.env_prod", True),
        # OpenSSH security-key and backup private keys; their .pub halves are public
        ("/p/id_ed25519_sk", True),
        ("/p/id_ecdsa_sk", True),
        ("/p/id_rsa.bak", True),
        ("/p/id_ed25519_sk.pub", False),
    ],
)
def test_is_sensitive_names(path: str, sensitive: bool) -> None:
    assert (is_sensitive(path) is not None) is sensitive


def test_modes_map_to_policies() -> None:
    assert policy_for_mode("default") == "ask"
    assert policy_for_mode("accept_edits") == "workspace"
    assert policy_for_mode("dont_ask") == "session"
    assert policy_for_mode("something-new") == "ask"
