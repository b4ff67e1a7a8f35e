"""``python -m codegen.update`` on copies of the vendored schema folder (never the real one)."""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from codegen.build import read_lock
from codegen.ir import SchemaSet
from codegen.update import UpdateError, main, read_tarball

ROOT = Path(__file__).resolve().parents[2]
NAMES = ("schema.json", "schema.unstable.json", "schema.lock.json")

BAD_FOR_CODEGEN = {
    "$defs": {
        "A": {"type": "object", "properties": {"a": {"type": "string"}}},
        "B": {"type": "object", "properties": {"b": {"type": "string"}}},
        # Readable for the changelog, but codegen refuses a member with two bases.
        "U": {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"kind": {"type": "string", "const": "x"}},
                    "required": ["kind"],
                    "allOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}],
                }
            ]
        },
    }
}


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _one_error_line(err: str) -> str:
    assert err.startswith("schema-update: error: ")
    assert err.count("\n") == 1
    return err


def test_from_dir_replaces_files_and_lock(
    reference: Path, schema_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = reference / "v1"
    argv = ["--from-dir", str(source), "--schema-dir", str(schema_copy), "--no-regen"]
    assert main(argv) == 0
    for name in ("schema.json", "schema.unstable.json"):
        assert (schema_copy / name).read_bytes() == (source / name).read_bytes()
    lock = json.loads((schema_copy / "schema.lock.json").read_text())
    assert lock == {
        "package": "@agentclientprotocol/sdk",
        "version": "v1",
        "source": str(source.resolve()),
        "protocolVersion": 1,
        "files": {
            name: hashlib.sha256((source / name).read_bytes()).hexdigest()
            for name in ("schema.json", "schema.unstable.json")
        },
    }
    # codegen itself accepts the new lock, and no temporary file is left behind.
    read_lock(schema_copy, SchemaSet.load(schema_copy))
    assert sorted(p.name for p in schema_copy.iterdir()) == sorted(NAMES)
    out = capsys.readouterr().out
    assert out.startswith(f"Updated {schema_copy} from 2.4.0 to v1.\n")
    assert "ACP protocol changes: 2.4.0 -> v1" in out
    assert "- removed: SessionUpdate[notice] (extends Notice)" not in out  # detail only on add
    assert "- removed: SessionUpdate[notice]" in out
    assert "- moved back to unstable: SessionUpdate[compaction_update]" in out
    assert "- added: nes/suggest (agent request) [unstable]" in out


def test_version_flag_names_a_local_folder(
    reference: Path, schema_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--from-dir", str(reference / "v1-schema-v1.19.0"), "--version", "1.19.0"]
    assert main([*argv, "--schema-dir", str(schema_copy), "--no-regen"]) == 0
    assert json.loads((schema_copy / "schema.lock.json").read_text())["version"] == "1.19.0"
    assert "from 2.4.0 to 1.19.0." in capsys.readouterr().out


def test_identical_files_are_a_no_op(
    reference: Path, schema_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _snapshot(schema_copy)
    argv = ["--from-dir", str(reference / "ts-sdk-2.4.0" / "v1"), "--schema-dir", str(schema_copy)]
    assert main(argv) == 0  # regen is never reached: nothing changed
    # A release named otherwise but shipping the same files (2.3.0 and 2.4.0 do): said so.
    assert capsys.readouterr().out == (
        "v1 ships the same schema files as the vendored 2.4.0; "
        "nothing to do (the lock keeps 2.4.0).\n"
    )
    assert main([*argv, "--version", "2.4.0"]) == 0
    assert capsys.readouterr().out == "Schema already at 2.4.0; nothing to do.\n"
    assert _snapshot(schema_copy) == before


def test_missing_file_leaves_schema_untouched(
    reference: Path, schema_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    shutil.copy(reference / "v1" / "schema.json", bad / "schema.json")
    before = _snapshot(schema_copy)
    assert main(["--from-dir", str(bad), "--schema-dir", str(schema_copy), "--no-regen"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "schema.unstable.json" in _one_error_line(captured.err)
    assert _snapshot(schema_copy) == before


def test_invalid_json_leaves_schema_untouched(
    schema_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "schema.json").write_text("{}")
    (bad / "schema.unstable.json").write_text('{"$defs": ')
    before = _snapshot(schema_copy)
    assert main(["--from-dir", str(bad), "--schema-dir", str(schema_copy), "--no-regen"]) == 1
    assert "not a usable ACP schema" in _one_error_line(capsys.readouterr().err)
    assert _snapshot(schema_copy) == before


def test_regen_failure_restores_schema(
    schema_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    for name in ("schema.json", "schema.unstable.json"):
        (bad / name).write_text(json.dumps(BAD_FOR_CODEGEN))
    before = _snapshot(schema_copy)
    out = tmp_path / "out"
    argv = ["--from-dir", str(bad), "--schema-dir", str(schema_copy), "--out", str(out)]
    assert main([*argv, "--package", "acp_bad"]) == 1
    err = _one_error_line(capsys.readouterr().err)
    assert "regeneration failed" in err and "several definitions" in err
    assert "restored the previous schema files and lock" in err
    assert _snapshot(schema_copy) == before
    assert not out.exists()


def test_missing_npm_is_a_clear_error(
    schema_copy: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    before = _snapshot(schema_copy)
    assert main(["--version", "2.4.0", "--schema-dir", str(schema_copy), "--no-regen"]) == 1
    assert "npm not found on PATH" in _one_error_line(capsys.readouterr().err)
    assert _snapshot(schema_copy) == before


def _tarball(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_read_tarball(tmp_path: Path) -> None:
    good = _tarball(
        tmp_path / "good.tgz",
        {
            "package/package.json": b"{}",
            "package/schema/v1/schema.json": b"stable",
            "package/schema/v1/schema.unstable.json": b"unstable",
            "package/schema/v2/schema.json": b"v2",
        },
    )
    assert read_tarball(good) == {"schema.json": b"stable", "schema.unstable.json": b"unstable"}


SCHEMAS = {
    "package/schema/v1/schema.json": b"{}",
    "package/schema/v1/schema.unstable.json": b"{}",
}


@pytest.mark.parametrize(
    ("members", "message"),
    [
        (
            {"package/schema/v1/schema.json": b"{}"},
            "no regular file package/schema/v1/schema.unstable.json",
        ),
        ({**SCHEMAS, "package/../../etc/evil": b"x"}, "unsafe member path"),
        ({**SCHEMAS, "/etc/evil": b"x"}, "unsafe member path"),
    ],
)
def test_read_tarball_refuses(tmp_path: Path, members: dict[str, bytes], message: str) -> None:
    path = _tarball(tmp_path / "pkg.tgz", members)
    with pytest.raises(UpdateError, match=re.escape(message)):
        read_tarball(path)


def test_read_tarball_rejects_garbage(tmp_path: Path) -> None:
    path = tmp_path / "pkg.tgz"
    path.write_bytes(b"\x1f\x8b not really gzip")
    with pytest.raises(UpdateError, match="not a readable package tarball"):
        read_tarball(path)


@pytest.mark.timeout(60)
def test_update_regenerates_an_importable_package(reference: Path, schema_copy: Path) -> None:
    """The real path: the CLI vendors v1.21.0 and regenerates into a temp package."""
    out = schema_copy.parent / "acp_x"
    update = subprocess.run(
        [
            *(sys.executable, "-m", "codegen.update", "--from-dir", str(reference / "v1")),
            *("--schema-dir", str(schema_copy), "--out", str(out), "--package", "acp_x"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert update.returncode == 0, update.stderr
    assert "ACP protocol changes: 2.4.0 -> v1" in update.stdout
    check = subprocess.run(
        [
            *(sys.executable, "-m", "codegen", "--schema-dir", str(schema_copy)),
            *("--out", str(out), "--package", "acp_x", "--check"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import acp_x.models, acp_x.dispatch, acp_x.peers, acp_x.interfaces;"
        "import acp_x.methods as m;"
        "print(m.PROTOCOL_VERSION, m.NES_SUGGEST, hasattr(m, 'SESSION_ARCHIVE'),"
        " acp_x.models.__file__.startswith(sys.argv[1]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, str(out.parent)],
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1", "nes/suggest", "False", "True"]
