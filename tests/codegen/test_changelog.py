"""The protocol changelog between schema versions: real reference versions and a tiny pair."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codegen.changelog import NO_CHANGES, Changelog, diff_schemas, main
from codegen.ir import SchemaSet


def _diff(reference: Path, old: str, new: str) -> Changelog:
    return diff_schemas(SchemaSet.load(reference / old), SchemaSet.load(reference / new))


def test_v1_19_to_v1_21(reference: Path) -> None:
    log = _diff(reference, "v1-schema-v1.19.0", "v1")
    assert log.names("methods", "to_stable") == {"elicitation/create", "elicitation/complete"}
    assert not log.names("methods", "added") and not log.names("methods", "removed")
    assert {"CreateElicitationRequest", "ElicitationSchema"} <= log.names("types", "to_stable")
    assert "AuthEnvVar" in log.names("types", "removed")
    assert log.names("values", "added") == {
        "SessionUpdate[compaction_update]",
        "SessionUpdate[compaction_summary_chunk]",
    }
    assert log.names("values", "to_stable") == {"AuthMethod[terminal]"}
    assert log.names("values", "removed") == {"AuthMethod[env_var]"}
    assert {"ToolCall.name", "ClientSessionCapabilities.compaction"} <= log.names("fields", "added")
    assert log.names("fields", "to_stable") == {
        "ClientCapabilities.auth",
        "ClientCapabilities.elicitation",
    }
    # A promoted type is one line, not one line per field.
    assert not any(name.startswith("CreateElicitationRequest.") for name in _all_names(log))
    text = log.render()
    assert "- moved to stable: elicitation/create (client request)" in text
    assert "- added: SessionUpdate[compaction_update] (extends CompactionUpdate) [unstable]" in text


def test_v1_21_to_ts_sdk_2_4(reference: Path) -> None:
    log = _diff(reference, "v1", "ts-sdk-2.4.0/v1")
    added_methods = {c.name: c for c in log.changes if c.section == "methods" and c.what == "added"}
    for name in (
        "session/archive",
        "session/unarchive",
        "session/status",
        "session/set_title",
        "auth/status",
        "auth/status_update",
        "proxy/initialize",
        "proxy/successor",
    ):
        assert added_methods[name].status == "unstable", name
    assert added_methods["auth/status"].detail == "agent request"
    assert added_methods["auth/status_update"].detail == "client notification"
    removed = log.names("methods", "removed")
    assert {"nes/start", "nes/suggest", "nes/accept", "nes/reject", "nes/close"} <= removed
    assert {"document/didOpen", "mcp/connect", "mcp/disconnect"} <= removed
    # The stable method set is the same in both versions.
    stable_moves = log.names("methods", "to_stable") | log.names("methods", "to_unstable")
    assert not stable_moves
    assert all(c.status == "unstable" for c in log.changes if c.section == "methods")
    # Stable gains three SessionUpdate variants: one new, two promoted from unstable.
    notice = next(c for c in log.changes if c.name == "SessionUpdate[notice]")
    assert (notice.what, notice.status) == ("added", None)
    assert log.names("values", "to_stable") == {
        "SessionUpdate[compaction_update]",
        "SessionUpdate[compaction_summary_chunk]",
    }
    assert "ClientSessionCapabilities.notices" in log.names("fields", "added")
    assert "ClientSessionCapabilities.compaction" in log.names("fields", "to_stable")
    text = log.render()
    assert "- added: SessionUpdate[notice] (extends Notice)\n" in text
    assert "- added: Notice [stable]" in text
    assert "- added: session/archive (agent request) [unstable]" in text
    assert "- removed: nes/suggest (agent request) [was unstable]" in text
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    assert sections == ["## Methods", "## Types", "## Fields", "## Enum and union values"]


def test_reverse_diff_swaps_added_and_removed(reference: Path) -> None:
    forward = _diff(reference, "v1", "ts-sdk-2.4.0/v1")
    backward = _diff(reference, "ts-sdk-2.4.0/v1", "v1")
    for section in ("methods", "types", "fields", "values"):
        assert forward.names(section, "added") == backward.names(section, "removed")
        assert forward.names(section, "to_stable") == backward.names(section, "to_unstable")


def test_render_is_deterministic(reference: Path) -> None:
    first = _diff(reference, "v1-schema-v1.19.0", "ts-sdk-2.4.0/v1").render()
    assert first == _diff(reference, "v1-schema-v1.19.0", "ts-sdk-2.4.0/v1").render()
    lines = [line for line in first.splitlines() if line.startswith("- ")]
    assert len(lines) == len(set(lines))


def test_identical_folders(reference: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _diff(reference, "v1", "v1")
    assert not log
    assert log.render() == NO_CHANGES == "No protocol changes."
    assert main([str(reference / "v1"), str(reference / "v1")]) == 0
    assert capsys.readouterr().out == "No protocol changes.\n"


def test_cli_reports_unreadable_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "missing"), str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("changelog: cannot compare schemas:")
    assert captured.err.count("\n") == 1


# --- a tiny hand-made schema pair -----------------------------------------------------------


def _obj(props: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(required)}


def _variant(tag: str, props: dict[str, Any] | None = None) -> dict[str, Any]:
    return _obj({"kind": {"type": "string", "const": tag}, **(props or {})}, ("kind",))


def _message(method: str, side: str, props: dict[str, Any]) -> dict[str, Any]:
    return {**_obj(props), "x-method": method, "x-side": side}


def _write(folder: Path, stable: dict[str, Any], unstable_extra: dict[str, Any]) -> Path:
    folder.mkdir()
    (folder / "schema.json").write_text(json.dumps({"$defs": stable}))
    (folder / "schema.unstable.json").write_text(
        json.dumps({"$defs": {**stable, **unstable_extra}})
    )
    return folder


STR = {"type": "string"}


def _tiny_pair(tmp_path: Path) -> Changelog:
    old_stable = {
        "Point": _obj({"x": STR, "y": STR, "z": STR}, ("x",)),
        "Color": {
            "oneOf": [{"type": "string", "const": "red"}, {"type": "string", "const": "blue"}]
        },
        "Shape": {"oneOf": [_variant("square", {"side": STR}), _variant("gone")]},
        "PingRequest": _message("ping", "agent", {"n": STR}),
        "PingResponse": _message("ping", "agent", {}),
        "OldNotification": _message("old/note", "client", {}),
    }
    old_unstable = {
        "Beta": _obj({"b": STR}),
        "Shape": {"oneOf": [*old_stable["Shape"]["oneOf"], _variant("circle")]},
        "Point": _obj({"x": STR, "y": STR, "z": STR, "w": STR}, ("x",)),
        "BetaRequest": _message("beta/go", "agent", {}),
        "BetaResponse": _message("beta/go", "agent", {}),
    }
    new_stable = {
        "Point": _obj({"x": STR, "y": STR, "v": STR, "w": STR}, ("y", "v")),
        "Color": {
            "oneOf": [{"type": "string", "const": "red"}, {"type": "string", "const": "green"}]
        },
        "Shape": {
            "oneOf": [
                _variant("square", {"side": STR, "label": STR}),
                _variant("circle", {"radius": STR}),
            ]
        },
        "PingRequest": _message("ping", "agent", {"n": STR}),
        "PingResponse": _message("ping", "agent", {}),
        "BetaRequest": _message("beta/go", "agent", {}),
        "BetaResponse": _message("beta/go", "agent", {}),
        "Beta": _obj({"b": STR, "c": STR}),
        "Fresh": _obj({"f": STR}),
    }
    new_unstable = {
        "Shape": {"oneOf": [*new_stable["Shape"]["oneOf"], _variant("star")]},
        "Lab": _obj({"l": STR}),
    }
    old = _write(tmp_path / "old", old_stable, old_unstable)
    new = _write(tmp_path / "new", new_stable, new_unstable)
    return diff_schemas(SchemaSet.load(old), SchemaSet.load(new), old_label="a", new_label="b")


def test_tiny_pair_fields(tmp_path: Path) -> None:
    log = _tiny_pair(tmp_path)
    assert log.names("fields", "added") == {
        "Point.v",
        "Shape[square].label",
        "Shape[circle].radius",
        "Beta.c",
    }
    assert log.names("fields", "removed") == {"Point.z"}
    assert log.names("fields", "now_required") == {"Point.y"}
    assert log.names("fields", "now_optional") == {"Point.x"}
    assert log.names("fields", "to_stable") == {"Point.w"}
    # Beta was promoted whole: its old field is not listed as promoted one by one.
    assert "Beta.b" not in _all_names(log)
    # The tag of a union member is its identity, never a field.
    assert not any(name.endswith(".kind") for name in _all_names(log))
    text = log.render()
    assert "- added: Point.v (required)" in text
    assert "- now optional: Point.x" in text


def test_tiny_pair_values_methods_types(tmp_path: Path) -> None:
    log = _tiny_pair(tmp_path)
    assert log.names("values", "added") == {"Color[green]", "Shape[star]"}
    assert log.names("values", "removed") == {"Color[blue]", "Shape[gone]"}
    assert log.names("values", "to_stable") == {"Shape[circle]"}
    assert log.names("methods", "to_stable") == {"beta/go"}
    assert log.names("methods", "removed") == {"old/note"}
    assert log.names("types", "added") == {"Fresh", "Lab"}
    assert log.names("types", "to_stable") == {"Beta", "BetaRequest", "BetaResponse"}
    text = log.render()
    assert text.splitlines()[0] == "ACP protocol changes: a -> b"
    assert "- added: Fresh [stable]" in text
    assert "- added: Lab [unstable]" in text
    assert "- added: Shape[star] [unstable]" in text
    assert "- removed: old/note (client notification)\n" in text
    assert "- moved to stable: beta/go (agent request)" in text


def test_method_moved_back_to_unstable(tmp_path: Path) -> None:
    ping = {
        "PingRequest": _message("ping", "agent", {}),
        "PingResponse": _message("ping", "agent", {}),
    }
    old = _write(tmp_path / "old", ping, {})
    new = _write(tmp_path / "new", {}, ping)
    log = diff_schemas(SchemaSet.load(old), SchemaSet.load(new))
    assert log.names("methods", "to_unstable") == {"ping"}
    assert "- moved back to unstable: ping (agent request)" in log.render()


def _all_names(log: Changelog) -> set[str]:
    return {c.name for c in log.changes}
