"""Table-driven tests of acpwire.config.paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acpwire.config.paths import (
    is_wsl,
    normalize_for_compare,
    require_absolute_cwd,
    resolve_in_cwd,
    translate_cwd,
)

WSL_CASES = [
    (r"C:\x\y", "/mnt/c/x/y"),
    ("C:/x", "/mnt/c/x"),
    ("e:\\Projects\\", "/mnt/e/Projects"),
    (r"D:\\", "/mnt/d"),
    ("D:", "/mnt/d"),
    (r"C:\x\\y\\", "/mnt/c/x/y"),
    (r"\\wsl$\Ubuntu\home\u", "/home/u"),
    (r"\\wsl.localhost\Ubuntu-22.04\home\u\proj", "/home/u/proj"),
    (r"\\WSL.LOCALHOST\Debian", "/"),
    ("//wsl$/Ubuntu/home/u", "/home/u"),
    ("file:///C:/x", "/mnt/c/x"),
    ("file:///c%3A/My%20Dir", "/mnt/c/My Dir"),
    ("file:///home/u", "/home/u"),
    ("file:///home/u/my%20proj", "/home/u/my proj"),
    ("FILE://localhost/home/u", "/home/u"),
    ("file:/home/u", "/home/u"),
    ("file://wsl.localhost/Ubuntu/home/u", "/home/u"),
    ("/home/u", "/home/u"),
    ("relative/dir", "relative/dir"),
    (r"\\server\share\x", r"\\server\share\x"),
    ("file://otherhost/share/x", "file://otherhost/share/x"),
    ("C:relative", "C:relative"),
]

NATIVE_CASES = [
    (r"C:\x\y", r"C:\x\y"),
    ("C:/x", "C:/x"),
    (r"\\wsl$\Ubuntu\home\u", r"\\wsl$\Ubuntu\home\u"),
    ("file:///home/u", "/home/u"),
    ("file:///home/u/a%23b", "/home/u/a#b"),
    ("file://localhost/srv/x", "/srv/x"),
    ("file:///C:/x", "C:/x"),
    ("file://wsl.localhost/Ubuntu/home/u", "file://wsl.localhost/Ubuntu/home/u"),
    ("file://otherhost/x", "file://otherhost/x"),
    ("/srv/project", "/srv/project"),
]


@pytest.mark.parametrize(("raw", "expected"), WSL_CASES)
def test_translate_under_wsl(raw: str, expected: str) -> None:
    assert translate_cwd(raw, wsl=True) == expected


@pytest.mark.parametrize(("raw", "expected"), NATIVE_CASES)
def test_translate_outside_wsl(raw: str, expected: str) -> None:
    assert translate_cwd(raw, wsl=False) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Linux version 5.15.153.1-microsoft-standard-WSL2 (root@...)", True),
        ("Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com)", True),
        ("Linux version 6.8.0-45-generic (buildd@lcy02-amd64-075)", False),
        ("", False),
    ],
)
def test_is_wsl(text: str, expected: bool) -> None:
    assert is_wsl(text) is expected


def test_is_wsl_reads_proc_version_without_failing() -> None:
    assert isinstance(is_wsl(), bool)


@pytest.mark.parametrize(
    ("raw", "wsl", "expected"),
    [
        ("/home/u/proj", False, "/home/u/proj"),
        ("/home/u/proj/", False, "/home/u/proj"),
        ("/home/u/./a/../proj", False, "/home/u/proj"),
        ("//home/u", False, "/home/u"),
        ("/", False, "/"),
        ("file:///home/u/x%20y", False, "/home/u/x y"),
        (r"C:\Users\me\proj", True, "/mnt/c/Users/me/proj"),
        (r"\\wsl$\Ubuntu\home\u", True, "/home/u"),
    ],
)
def test_require_absolute_cwd_accepts(raw: str, wsl: bool, expected: str) -> None:
    assert require_absolute_cwd(raw, wsl=wsl) == expected


@pytest.mark.parametrize(
    ("raw", "wsl"),
    [
        ("x", False),
        ("", False),
        ("./proj", False),
        ("~/proj", False),
        (r"C:\x", False),
        ("C:relative", True),
        (r"\\server\share", True),
        ("file://otherhost/x", False),
    ],
)
def test_require_absolute_cwd_rejects(raw: str, wsl: bool) -> None:
    with pytest.raises(ValueError) as caught:
        require_absolute_cwd(raw, wsl=wsl)
    assert str(caught.value) == f"cwd must be an absolute path, got {raw!r}"


def test_require_absolute_cwd_rejects_nul() -> None:
    with pytest.raises(ValueError, match="NUL"):
        require_absolute_cwd("/home/u\x00x", wsl=False)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("/home/u/proj", "/home/u/proj/"),
        ("/home/u/proj", "/home/u//proj/."),
        ("/mnt/C/Users/x", "/mnt/c/Users/x"),
        (r"C:\Users\x", "/mnt/c/Users/x"),
        ("file:///home/u/proj", "/home/u/proj"),
        ("~/proj", os.path.join(os.path.expanduser("~"), "proj")),
    ],
)
def test_normalize_for_compare_equal(left: str, right: str) -> None:
    assert normalize_for_compare(left) == normalize_for_compare(right)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("/home/u/proj", "/home/u/Proj"),
        ("/mnt/c/x", "/mnt/d/x"),
        ("/mnt/cc/x", "/mnt/CC/x"),
    ],
)
def test_normalize_for_compare_different(left: str, right: str) -> None:
    assert normalize_for_compare(left) != normalize_for_compare(right)


def test_resolve_relative_uses_session_cwd_not_process_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "ws"
    elsewhere = tmp_path / "elsewhere"
    workspace.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert resolve_in_cwd("src/a.py", str(workspace), wsl=False) == workspace.resolve() / "src/a.py"
    assert resolve_in_cwd("../x", str(workspace), wsl=False) == tmp_path.resolve() / "x"


def test_resolve_follows_symlinks(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "link").symlink_to(real, target_is_directory=True)
    resolved = resolve_in_cwd("link/file.txt", str(tmp_path / "ws"), wsl=False)
    assert resolved == real.resolve() / "file.txt"


def test_resolve_symlink_loop_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    try:
        resolved = resolve_in_cwd("a/x", str(tmp_path), wsl=False)
    except ValueError as exc:
        assert "cannot resolve path 'a/x'" in str(exc)
    else:
        # Newer Pythons return the unresolved path instead of raising.
        assert resolved.name == "x"


@pytest.mark.parametrize(
    ("path", "cwd", "wsl", "expected"),
    [
        ("/etc/hosts", "/home/u", False, "/etc/hosts"),
        ("file:///srv/a%20b.txt", "/home/u", False, "/srv/a b.txt"),
        (r"C:\proj\main.py", "/home/u", True, "/mnt/c/proj/main.py"),
        (r"sub\file.py", r"C:\proj", True, "/mnt/c/proj/sub/file.py"),
        (r"sub\file.py", "/srv", False, "/srv/sub\\file.py"),
        ("a/b.txt", r"C:\proj", True, "/mnt/c/proj/a/b.txt"),
        ("a/b.txt", r"\\wsl$\Ubuntu\srv\proj", True, "/srv/proj/a/b.txt"),
    ],
)
def test_resolve_forms(path: str, cwd: str, wsl: bool, expected: str) -> None:
    assert resolve_in_cwd(path, cwd, wsl=wsl) == Path(expected).resolve()


def test_resolve_expands_home() -> None:
    assert resolve_in_cwd("~/notes.md", "/srv", wsl=False) == Path.home().resolve() / "notes.md"


@pytest.mark.parametrize(
    ("path", "cwd", "message"),
    [
        ("", "/srv", "path must not be empty"),
        ("a.txt", "relative", "cwd must be an absolute path, got 'relative'"),
        ("a\x00b", "/srv", "NUL"),
    ],
)
def test_resolve_rejects(path: str, cwd: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        resolve_in_cwd(path, cwd, wsl=False)


def test_a_windows_network_share_is_not_read_as_a_local_path() -> None:
    """Under WSL ``\\\\server\\share\\x`` is a share of the Windows side: refused, never
    taken for the local ``/server/share/x``; the WSL distro's own UNC form still maps."""
    with pytest.raises(ValueError, match="network share"):
        resolve_in_cwd("\\\\server\\share\\x.txt", "/work", wsl=True)
    assert resolve_in_cwd("\\\\wsl$\\Ubuntu\\work\\a.txt", "/tmp", wsl=True) == Path("/work/a.txt")
