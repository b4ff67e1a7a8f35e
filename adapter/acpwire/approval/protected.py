"""Protected paths: the one list of places an edit is always asked for, in every mode.

Two layers, both here so there is a single source:

* :func:`is_sensitive` judges a path by its spelling (no disk access): ``.git``, ``.ssh``,
  ``.husky``, ``.vscode``, ``.idea``, ``.envs`` directories, ``.env*``/``.envrc*`` files,
  private keys, shell rc and profile files, autostart, cron and systemd user directories,
  acpwire's and Hermes' config homes and the user's ``sensitive_paths`` globs;
* :func:`protected_reason` adds what only the disk knows: the git directory a ``.git``
  file (worktrees, submodules) points to, bare repositories (a directory holding
  ``HEAD``, ``objects/`` and ``refs/``) and the directory ``core.hooksPath`` names.

:func:`protected_dirs` lists the existing protected directories at a workspace's top;
:data:`PROTECTED_NAME` and :func:`protected_places` let a walk (the command sandbox's,
:mod:`acpwire.sandbox.protected.tree`) test tens of thousands of names fast before asking
:func:`is_sensitive`, and :func:`repo_dirs` gives one nested repository's git
directories. Every comparison is case-insensitive, so a case variant on a
case-insensitive file system is caught too. Users can add globs, never remove an entry.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePath
from typing import Final

__all__ = [
    "PROTECTED_NAME",
    "config_homes",
    "git_dirs",
    "is_sensitive",
    "protected_dirs",
    "protected_name",
    "protected_places",
    "protected_reason",
    "repo_dirs",
]

_DIRS: Final = frozenset({".git", ".ssh", ".gnupg", ".aws", ".husky", ".vscode", ".idea", ".envs"})
"""Directory names protected wherever they are (git hooks, keys, editor tasks, env dirs)."""
_ENV_NAME: Final = re.compile(r"\.env(?:rc)?(?:[._-].*)?")
"""``.env``, ``.env.local``, ``.env-prod``, ``.envrc``, ``.envrc.local`` (direnv runs them)."""
_KEY_NAME: Final = re.compile(r"id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?(?:[._-].*)?")
"""OpenSSH private keys (``id_ed25519``, ``id_ecdsa_sk``, ``id_rsa.bak``...), not ``.pub``."""
_KEY_SUFFIXES: Final = (".pem", ".key", ".p12", ".pfx")
_HOME_FILES: Final = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".cshrc",
    ".tcshrc",
    ".kshrc",
    ".inputrc",
    ".xprofile",
    ".xinitrc",
    ".xsessionrc",
    ".pam_environment",
    ".gitconfig",
    ".config/fish",
    ".config/autostart",
    ".config/systemd",
    ".config/environment.d",
    ".config/git",
    ".local/share/systemd",
    ".local/bin",
)
"""Paths under the user's home that run code at login, start-up or git use (files and
directories: everything below a listed directory counts)."""
_SYSTEM: Final = ("/etc/cron", "/etc/anacrontab", "/var/spool/cron", "/etc/systemd")
"""Prefixes of system cron and systemd places (``/etc/cron.d``, ``/etc/crontab``...)."""


def config_homes(extra: Iterable[str | PurePath] = ()) -> list[Path]:
    """acpwire's config home (``$ACPWIRE_HOME``, default ``~/.acpwire``), Hermes' home
    (``$HERMES_HOME``, default ``~/.hermes``) and ``extra`` (the running backend's home)."""
    homes = [Path(str(home)).expanduser() for home in extra]
    for env, default in (("ACPWIRE_HOME", ".acpwire"), ("HERMES_HOME", ".hermes")):
        raw = os.environ.get(env, "").strip()
        homes.append(Path(raw).expanduser() if raw else Path.home() / default)
    return homes


def _key(path: str | PurePath) -> str:
    text = str(path).replace("\\", "/").lower()
    return text.rstrip("/") or "/"


def _under(full: str, prefix: str) -> bool:
    prefix = prefix.rstrip("/")
    return full == prefix or full.startswith(prefix + "/")


PROTECTED_NAME: Final = re.compile(
    "|".join(
        [
            *(re.escape(name) for name in sorted(_DIRS)),
            _ENV_NAME.pattern,
            _KEY_NAME.pattern,
            ".*(?:" + "|".join(re.escape(suffix) for suffix in _KEY_SUFFIXES) + ")",
        ]
    ),
    re.IGNORECASE | re.DOTALL,
)
"""Matches (``fullmatch``) every file name that is on the list by itself (a protected
directory name, an environment file, a private key; also ``.pub`` halves, which
:func:`is_sensitive` then lets go): a fast first test for walks."""


def protected_name(name: str) -> bool:
    """Whether :data:`PROTECTED_NAME` matches ``name`` (see there)."""
    return PROTECTED_NAME.fullmatch(name) is not None


def protected_places(homes: Iterable[str | PurePath] = ()) -> list[Path]:
    """The protected places that are absolute paths: the config homes and the start-up
    files and directories under the user's home (everything below them counts too)."""
    user_home = Path.home()
    return [*config_homes(homes), *(user_home / entry for entry in _HOME_FILES)]


def is_sensitive(
    path: str | PurePath,
    extra_patterns: Iterable[str] = (),
    *,
    homes: Iterable[str | PurePath] = (),
) -> str | None:
    """Why ``path`` is protected by its spelling, or None. ``/`` and ``\\`` both separate.

    ``extra_patterns`` are :mod:`fnmatch` globs matched against the file name and against
    the whole path (where ``*`` also matches ``/``), e.g. ``"*.p12"`` or ``"*/secrets/*"``.
    ``homes`` are config homes besides the default ones (see :func:`config_homes`).
    """
    full = _key(path)
    parts = [part for part in full.split("/") if part]
    for part in parts:
        if part in _DIRS:
            return f"inside a {part} directory"
    name = parts[-1] if parts else ""
    if _ENV_NAME.fullmatch(name):
        return f"environment file ({name})"
    private_key = _KEY_NAME.fullmatch(name) is not None and not name.endswith(".pub")
    if private_key or name.endswith(_KEY_SUFFIXES):
        return f"private key or certificate ({name})"
    for home in config_homes(homes):
        if _under(full, _key(home)):
            return f"inside a config home ({home})"
    user_home = _key(Path.home())
    for entry in _HOME_FILES:
        if _under(full, f"{user_home}/{entry}"):
            return f"runs at login or start-up (~/{entry})"
    if any(full.startswith(prefix) for prefix in _SYSTEM):
        return "cron or systemd configuration"
    for pattern in extra_patterns:
        lowered = pattern.replace("\\", "/").lower()
        if fnmatch.fnmatchcase(name, lowered) or fnmatch.fnmatchcase(full, lowered):
            return f"matches the sensitive pattern {pattern!r}"
    return None


def _hooks_path(config: Path) -> str | None:
    """``core.hooksPath`` of one git config file (last one wins), or None."""
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    section, found = "", None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line[1:].split("]", 1)[0].strip().lower()
            continue
        key, sep, value = line.partition("=")
        if sep and section == "core" and key.strip().lower() == "hookspath":
            found = value.split(" #", 1)[0].strip().strip('"')
    return found or None


def _is_git_dir(directory: Path) -> bool:
    return (directory / "HEAD").is_file() and all(
        (directory / sub).is_dir() for sub in ("objects", "refs")
    )


def _gitdir_file(dot_git: Path) -> Path | None:
    """The git directory a ``.git`` file (``gitdir: ...``) names, resolved."""
    try:
        line = dot_git.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not line.lower().startswith("gitdir:"):
        return None
    target = Path(line[len("gitdir:") :].strip())
    return (dot_git.parent / target).resolve() if not target.is_absolute() else target.resolve()


def _repo_dirs(top: Path) -> Iterator[Path]:
    """The git directories of the repository whose work tree (or bare git dir) is ``top``."""
    dot_git = top / ".git"
    if dot_git.is_dir():
        git_dir: Path | None = dot_git.resolve()
    elif dot_git.is_file():
        git_dir = _gitdir_file(dot_git)
    else:
        git_dir = top if _is_git_dir(top) else None
    if git_dir is None:
        return
    yield git_dir
    configs = [git_dir / "config", git_dir / "config.worktree"]
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        common = ""
    if common:
        common_dir = (git_dir / common).resolve()
        yield common_dir
        configs.append(common_dir / "config")
    home = Path.home()
    configs += [home / ".gitconfig", home / ".config" / "git" / "config"]
    for config in configs:
        hooks = _hooks_path(config)
        if hooks:
            hooks_dir = Path(os.path.expanduser(hooks))
            yield (hooks_dir if hooks_dir.is_absolute() else top / hooks_dir).resolve()


def repo_dirs(top: Path) -> list[Path]:
    """The git directories (resolved) and ``core.hooksPath`` directory of the repository
    whose work tree (or bare git directory) is ``top`` alone; [] for none."""
    try:
        return list(dict.fromkeys(_repo_dirs(top)))
    except (OSError, RuntimeError, ValueError):
        return []


def git_dirs(path: Path) -> list[Path]:
    """The git directories (resolved) and ``core.hooksPath`` directories of every
    repository enclosing ``path``, the path itself included."""
    found: list[Path] = []
    for top in (path, *path.parents):
        try:
            found.extend(d for d in _repo_dirs(top) if d not in found)
        except (OSError, RuntimeError, ValueError):
            continue  # unreadable or a link loop: judged by name only
    return found


def protected_reason(
    resolved: Path,
    extra_patterns: Iterable[str] = (),
    *,
    homes: Iterable[str | PurePath] = (),
    workspaces: Iterable[Path] = (),
) -> str | None:
    """Why the resolved path ``resolved`` is protected, or None (reads the disk).

    The git directories of the repositories enclosing ``resolved`` and the
    ``workspaces`` (a worktree's git directory lies elsewhere) count."""
    reason = is_sensitive(resolved, extra_patterns, homes=homes)
    if reason is not None:
        return reason
    key = _key(resolved)
    found = git_dirs(resolved)
    for workspace in workspaces:
        found += git_dirs(workspace)
    for directory in found:
        if _under(key, _key(directory)):
            return f"inside a git directory or hooks directory ({directory})"
    return None


def protected_dirs(
    workspace: str | Path,
    *,
    homes: Iterable[str | PurePath] = (),
) -> list[Path]:
    """The existing protected directories of ``workspace`` (resolved): its git
    directories and hooks directory, ``.husky``, ``.vscode``, ``.idea``, ``.envs``,
    ``.ssh``... at its top, and the config homes. What a sandbox binds read-only."""
    root = Path(workspace).resolve()
    found = git_dirs(root)
    found += [(root / name).resolve() for name in sorted(_DIRS) if (root / name).is_dir()]
    found += [home.resolve() for home in config_homes(homes) if home.is_dir()]
    unique: list[Path] = []
    for directory in found:
        if directory.is_dir() and directory not in unique:
            unique.append(directory)
    return unique
