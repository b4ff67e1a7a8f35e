"""``make schema-update``: vendor a newer published ACP schema, regenerate, print what changed.

``python -m codegen.update [--version X.Y.Z] [--from-dir DIR] [--schema-dir schema] [--no-regen]``
takes ``schema/v1/schema.json`` and ``schema.unstable.json`` from the npm package
``@agentclientprotocol/sdk`` (``npm pack``; default: the ``latest`` version) or from a local
folder, replaces the vendored files and ``schema.lock.json``, runs ``python -m codegen`` and
prints the protocol changelog. On any failure the vendored files and lock stay as they were.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .build import LOCK_NAME
from .changelog import diff_schemas
from .ir import SchemaSet

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "@agentclientprotocol/sdk"
FILES = ("schema.json", "schema.unstable.json")
PACKAGE_FOLDER = "package/schema/v1/"
VERSION_RE = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$")
NPM_TIMEOUT = 300.0
REGEN_TIMEOUT = 600.0


class UpdateError(Exception):
    """The update cannot go ahead; the message is the one line the user sees."""


@dataclass(frozen=True, slots=True)
class Release:
    """A schema version to vendor: its two files and where they came from."""

    version: str
    source: str
    files: dict[str, bytes]


def read_folder(folder: Path, version: str | None = None) -> Release:
    """The two schema files of a local folder; the version defaults to the folder name."""
    files: dict[str, bytes] = {}
    for name in FILES:
        try:
            files[name] = (folder / name).read_bytes()
        except OSError as exc:
            raise UpdateError(f"cannot read {folder / name}: {exc.strerror or exc}") from exc
    return Release(version or folder.resolve().name, str(folder.resolve()), files)


def read_tarball(path: Path) -> dict[str, bytes]:
    """The two schema files out of an npm package tarball, refusing unsafe member paths."""
    try:
        with tarfile.open(path, "r:*") as tar:
            members = {}
            for member in tar.getmembers():
                parts = PurePosixPath(member.name)
                if parts.is_absolute() or ".." in parts.parts:
                    raise UpdateError(f"{path.name}: refusing unsafe member path {member.name!r}")
                members[member.name] = member
            files: dict[str, bytes] = {}
            for name in FILES:
                found = members.get(PACKAGE_FOLDER + name)
                if found is None or not found.isfile():
                    raise UpdateError(f"{path.name}: no regular file {PACKAGE_FOLDER}{name}")
                stream = tar.extractfile(found)
                if stream is None:
                    raise UpdateError(f"{path.name}: cannot read {found.name}")
                files[name] = stream.read()
            return files
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise UpdateError(f"{path.name}: not a readable package tarball ({exc})") from exc


def _npm(args: list[str], cwd: Path) -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise UpdateError("npm not found on PATH; install Node.js or pass --from-dir DIR")
    log.info("running npm %s", " ".join(args))
    try:
        proc = subprocess.run(
            [npm, *args], cwd=cwd, capture_output=True, text=True, timeout=NPM_TIMEOUT
        )
    except subprocess.TimeoutExpired as exc:
        raise UpdateError(f"npm {args[0]} timed out after {NPM_TIMEOUT:.0f}s") from exc
    except OSError as exc:
        raise UpdateError(f"cannot run npm: {exc}") from exc
    if proc.returncode != 0:
        reason = _npm_reason(proc.stderr) or _last_line(proc.stdout) or "no output"
        raise UpdateError(f"npm {' '.join(args)} failed (exit {proc.returncode}): {reason}")
    return proc.stdout


def fetch_npm(version: str, workdir: Path) -> Release:
    """``npm pack`` the SDK at ``version`` (``latest`` is resolved first) into ``workdir``."""
    if version == "latest":
        version = _npm(["view", PACKAGE, "version"], workdir).strip()
    if not VERSION_RE.match(version):
        raise UpdateError(f"not a package version: {version!r} (want X.Y.Z)")
    _npm(["pack", f"{PACKAGE}@{version}", "--ignore-scripts", "--loglevel=error"], workdir)
    tarballs = sorted(workdir.glob("*.tgz"))
    if len(tarballs) != 1:
        raise UpdateError(f"npm pack left {len(tarballs)} tarballs in {workdir}, expected 1")
    files = read_tarball(tarballs[0])
    return Release(version, f"npm pack {PACKAGE}@{version} (schema/v1/)", files)


def _npm_reason(stderr: str) -> str:
    """The line of npm's error output that says what went wrong (not its code or log path)."""
    for line in stderr.splitlines():
        text = re.sub(r"^npm (error|ERR!)\s*", "", line.strip())
        if text and not text.startswith(("code ", "A complete log")):
            return text
    return _last_line(stderr)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _lock_text(release: Release) -> bytes:
    lock = {
        "package": PACKAGE,
        "version": release.version,
        "source": release.source,
        "protocolVersion": 1,
        "files": {name: hashlib.sha256(release.files[name]).hexdigest() for name in FILES},
    }
    return (json.dumps(lock, indent=2) + "\n").encode()


def _replace_all(schema_dir: Path, contents: dict[str, bytes | None]) -> None:
    """Write every file to a temporary sibling first, then rename each into place;
    ``None`` removes the file. Nothing is renamed unless every write succeeded."""
    staged: dict[str, str] = {}
    try:
        for name, data in contents.items():
            if data is None:
                continue
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=schema_dir)
            staged[name] = tmp
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
        for name, data in contents.items():
            if data is None:
                (schema_dir / name).unlink(missing_ok=True)
            else:
                os.replace(staged.pop(name), schema_dir / name)
    finally:
        for tmp in staged.values():
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _current(schema_dir: Path) -> dict[str, bytes | None]:
    names = (*FILES, LOCK_NAME)
    return {n: (schema_dir / n).read_bytes() if (schema_dir / n).exists() else None for n in names}


def _locked_version(lock: bytes | None) -> str:
    try:
        version = json.loads(lock)["version"] if lock is not None else None
    except (ValueError, KeyError, TypeError):
        version = None
    return str(version or "unversioned")


def _regenerate(schema_dir: Path, out: Path | None, package: str | None) -> None:
    cmd = [sys.executable, "-m", "codegen", "--schema-dir", str(schema_dir.resolve())]
    if out is not None:
        cmd += ["--out", str(out.resolve())]
    if package is not None:
        cmd += ["--package", package]
    log.info("regenerating: %s", " ".join(cmd))
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=REGEN_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UpdateError(f"regeneration did not run to completion: {exc}") from exc
    if proc.returncode != 0:
        reason = _last_line(proc.stderr) or _last_line(proc.stdout) or "no output"
        raise UpdateError(f"regeneration failed (exit {proc.returncode}): {reason}")
    log.info("%s", _last_line(proc.stdout))


def update(
    schema_dir: Path,
    release: Release,
    *,
    regen: bool = True,
    out: Path | None = None,
    package: str | None = None,
) -> str:
    """Vendor ``release`` into ``schema_dir`` (and regenerate); returns the report to print."""
    before = _current(schema_dir)
    if all(before[name] == release.files[name] for name in FILES):
        locked = _locked_version(before[LOCK_NAME])
        if locked in (release.version, "unversioned"):
            return f"Schema already at {release.version}; nothing to do."
        return (
            f"{release.version} ships the same schema files as the vendored {locked}; "
            f"nothing to do (the lock keeps {locked})."
        )
    if any(before[name] is None for name in FILES):
        raise UpdateError(f"{schema_dir} has no vendored {' and '.join(FILES)} to update")
    old_version = _locked_version(before[LOCK_NAME])
    try:
        current = SchemaSet.load(schema_dir)
    except ValueError as exc:
        raise UpdateError(f"{schema_dir}: the vendored schema is not valid JSON ({exc})") from exc
    with tempfile.TemporaryDirectory(prefix="acp-schema-") as tmp:
        for name in FILES:
            (Path(tmp) / name).write_bytes(release.files[name])
        try:
            changelog = diff_schemas(
                current, SchemaSet.load(Path(tmp)), old_label=old_version, new_label=release.version
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            # Invalid JSON, or JSON without the shape of an ACP schema ($defs, x-method, ...).
            raise UpdateError(f"{release.source}: not a usable ACP schema ({exc!r})") from exc
    new_files: dict[str, bytes | None] = {name: release.files[name] for name in FILES}
    new_files[LOCK_NAME] = _lock_text(release)
    try:
        _replace_all(schema_dir, new_files)
    except OSError as exc:
        _replace_all(schema_dir, before)
        raise UpdateError(f"cannot write into {schema_dir}: {exc}") from exc
    if regen:
        try:
            _regenerate(schema_dir, out, package)
        except UpdateError as exc:
            _replace_all(schema_dir, before)
            raise UpdateError(f"{exc}; restored the previous schema files and lock") from exc
    return f"Updated {schema_dir} from {old_version} to {release.version}.\n\n" + changelog.render()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen.update", description=__doc__)
    parser.add_argument(
        "--version",
        help="package version X.Y.Z (default: latest); with --from-dir, the version to record "
        "in the lock (default: the folder name)",
    )
    parser.add_argument("--from-dir", type=Path, help="take the two files from this folder")
    parser.add_argument("--schema-dir", type=Path, default=ROOT / "schema")
    parser.add_argument("--no-regen", action="store_true", help="skip `python -m codegen`")
    parser.add_argument("--out", type=Path, help="regenerate into this folder (codegen --out)")
    parser.add_argument("--package", help="import name of the regenerated package")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    try:
        with tempfile.TemporaryDirectory(prefix="acp-npm-") as workdir:
            if args.from_dir is not None:
                release = read_folder(args.from_dir, args.version)
            else:
                release = fetch_npm(args.version or "latest", Path(workdir))
            report = update(
                args.schema_dir,
                release,
                regen=not args.no_regen,
                out=args.out,
                package=args.package,
            )
    except UpdateError as exc:
        print(f"schema-update: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    sys.stdout.write(report + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
