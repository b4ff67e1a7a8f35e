"""Path handling for session working directories and tool paths.

Editors send a session ``cwd`` in whatever form their host OS uses. When the backend runs
inside WSL while the editor runs on Windows, that is ``C:\\proj`` or ``\\\\wsl$\\Distro\\home\\u``;
some clients send ``file://`` URIs. Everything here turns such input into a POSIX path the
backend can use, and resolves tool paths against the *session* cwd, never the process cwd
(the Hermes adapter resolved relative edit paths against the process cwd).
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
from pathlib import Path
from urllib.parse import unquote

__all__ = [
    "absolute_in_cwd",
    "is_wsl",
    "normalize_for_compare",
    "require_absolute_cwd",
    "resolve_in_cwd",
    "translate_cwd",
]

_DRIVE_PATH = re.compile(r"^([A-Za-z]):(?:[\\/](.*))?$", re.DOTALL)
_WSL_UNC = re.compile(
    r"^(?:\\\\|//)(?:wsl\$|wsl\.localhost)[\\/][^\\/]+(?:[\\/](.*))?$", re.DOTALL | re.IGNORECASE
)
_WSL_HOSTS = frozenset({"wsl$", "wsl.localhost"})
_LOCAL_HOSTS = frozenset({"", "localhost"})
_MNT_DRIVE = re.compile(r"^/mnt/([A-Za-z])(?=/|$)")


@functools.cache
def _proc_version() -> str:
    try:
        return Path("/proc/version").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def is_wsl(version_text: str | None = None) -> bool:
    """Whether we run under WSL; ``version_text`` replaces ``/proc/version`` in tests."""
    text = _proc_version() if version_text is None else version_text
    return "microsoft" in text.lower()


def _join_posix(prefix: str, rest: str | None) -> str:
    # Drop empty segments so "C:\\x\\\\y\\" and "C:/x/y" give the same path.
    parts = [p for p in (rest or "").replace("\\", "/").split("/") if p]
    return prefix + "".join("/" + p for p in parts) if parts else (prefix or "/")


def _translate_windows(path: str) -> str | None:
    """``C:\\x`` → ``/mnt/c/x``; WSL UNC paths → the path inside the distro; else None."""
    drive = _DRIVE_PATH.match(path)
    if drive:
        return _join_posix("/mnt/" + drive.group(1).lower(), drive.group(2))
    unc = _WSL_UNC.match(path)
    if unc:
        return _join_posix("", unc.group(1))
    return None


def _translate_file_uri(raw: str, wsl: bool) -> str | None:
    """Decode a ``file:`` URI naming a local path, or return None when it names none.
    A query or fragment (``#L10-20`` of an editor's selection) is not part of the path;
    an escaped ``%23`` or ``%3F`` is."""
    raw = raw.split("#", 1)[0].split("?", 1)[0]
    if raw[:7].lower() == "file://":
        rest = raw[7:]
        host, sep, path = rest.partition("/")
        path = sep + path
    elif raw[:6].lower() == "file:/":
        host, path = "", raw[5:]
    else:
        return None
    path = unquote(path)
    host = unquote(host).lower()
    if host in _WSL_HOSTS:
        # file://wsl.localhost/Distro/home/u names /home/u inside that distro.
        return _join_posix("", path.lstrip("/").partition("/")[2]) if wsl else None
    if host not in _LOCAL_HOSTS:
        return None
    if re.match(r"^/[A-Za-z]:(?:/|$)", path):
        windows = path[1:]
        return (_translate_windows(windows) or windows) if wsl else windows
    return path


def translate_cwd(raw: str, *, wsl: bool | None = None) -> str:
    """Turn an editor-supplied path into the form this process uses.

    Under WSL, Windows drive paths, ``\\\\wsl$`` / ``\\\\wsl.localhost`` UNC paths and
    ``file://`` URIs become POSIX paths. Outside WSL only ``file://`` URIs of local paths
    are decoded; Windows paths are returned unchanged. Anything else is returned as is.
    """
    under_wsl = is_wsl() if wsl is None else wsl
    from_uri = _translate_file_uri(raw, under_wsl)
    if from_uri is not None:
        return from_uri
    if under_wsl:
        translated = _translate_windows(raw)
        if translated is not None:
            return translated
    return raw


def _clean(path: str) -> str:
    cleaned = posixpath.normpath(path)
    # POSIX keeps a leading "//" as implementation-defined; Linux treats it as "/".
    return "/" + cleaned.lstrip("/") if cleaned.startswith("//") else cleaned


def _reject_nul(path: str, what: str) -> None:
    if "\x00" in path:
        raise ValueError(f"{what} must not contain a NUL byte, got {path!r}")


def require_absolute_cwd(raw: str, *, wsl: bool | None = None) -> str:
    """Translate ``raw`` and return it normalised, or raise ValueError if not absolute."""
    _reject_nul(raw, "cwd")
    translated = translate_cwd(raw, wsl=wsl)
    if not translated.startswith("/"):
        raise ValueError(f"cwd must be an absolute path, got {raw!r}")
    return _clean(translated)


def normalize_for_compare(path: str) -> str:
    """A comparison key for cwd filters: the same directory spelt differently compares equal.

    Expands ``~``, translates Windows forms as WSL would (a comparison never touches the
    disk, so doing this everywhere is harmless), collapses ``.``/``..``/duplicate and
    trailing slashes and lower-cases the drive letter of ``/mnt/X``.
    """
    expanded = os.path.expanduser(translate_cwd(path, wsl=True))
    cleaned = _clean(expanded) if expanded else expanded
    return _MNT_DRIVE.sub(lambda m: "/mnt/" + m.group(1).lower(), cleaned)


def absolute_in_cwd(path: str, cwd: str, *, wsl: bool | None = None) -> Path:
    """A tool path made absolute against the session ``cwd`` and normalised as spelt
    (``..`` collapsed, no symlink followed): the path the model asked for.

    ``path`` may be relative (to ``cwd``, never to the process cwd), absolute, ``~``-based,
    a ``file://`` URI or, under WSL, a Windows path (absolute, UNC or relative with
    backslashes).
    """
    if not path:
        raise ValueError("path must not be empty")
    _reject_nul(path, "path")
    under_wsl = is_wsl() if wsl is None else wsl
    base = require_absolute_cwd(cwd, wsl=under_wsl)
    translated = os.path.expanduser(translate_cwd(path, wsl=under_wsl))
    if under_wsl and translated.startswith("\\\\"):
        # \\server\share: a Windows network share, not a file of this Linux system.
        raise ValueError(f"{path!r} is on a Windows network share, not reachable here")
    if under_wsl and not translated.startswith("/"):
        # A relative Windows path (src\main.py) from a Windows editor or a model.
        translated = translated.replace("\\", "/")
    candidate = translated if translated.startswith("/") else posixpath.join(base, translated)
    return Path(_clean(candidate))


def resolve_in_cwd(path: str, cwd: str, *, wsl: bool | None = None) -> Path:
    """:func:`absolute_in_cwd` with every symlink followed (at any depth, also in the
    parents of a file that does not exist yet): where a write really lands."""
    candidate = absolute_in_cwd(path, cwd, wsl=wsl)
    try:
        return candidate.resolve(strict=False)
    except (OSError, RuntimeError) as exc:
        # Python 3.11 raises RuntimeError for a symlink loop, later versions OSError.
        raise ValueError(f"cannot resolve path {path!r} in {cwd!r}: {exc}") from exc
