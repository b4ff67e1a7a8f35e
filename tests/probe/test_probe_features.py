"""Schema introspection against bindings generated from each vendored schema version."""

from __future__ import annotations

import json
import types
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest

from acpwire.probe import (
    BASELINE_UPDATES,
    GATED_UPDATES,
    SchemaFeatures,
    SchemaIntrospectionError,
    default_features,
    read_features,
)
from tests.probe.expected import BASELINE_11, VERSIONS

TOOL_KINDS = (
    "read",
    "edit",
    "delete",
    "move",
    "search",
    "execute",
    "think",
    "fetch",
    "switch_mode",
    "other",
)

# What each vendored schema really contains (read from schema.unstable.json, which the
# bindings are generated from, and checked against the files by test_policy_matches_schemas).
EXPECTED_TAGS = {
    "s119": BASELINE_11 | {"plan_update", "plan_removed"},
    "s121": BASELINE_11
    | {"plan_update", "plan_removed", "compaction_update", "compaction_summary_chunk"},
    "s240": BASELINE_11
    | {
        "plan_update",
        "plan_removed",
        "notice",
        "compaction_update",
        "compaction_summary_chunk",
        "subagent_update",
        "session_message",
        "session_message_chunk",
    },
}
EXPECTED_SESSION_CAPS = {
    "s119": {"_meta", "configOptions"},
    "s121": {"_meta", "configOptions", "compaction"},
    "s240": {"_meta", "configOptions", "compaction", "notices"},
}
EXPECTED_CLIENT_CAPS = {
    "s119": {
        "_meta",
        "fs",
        "terminal",
        "session",
        "auth",
        "elicitation",
        "plan",
        "nes",
        "positionEncodings",
    },
    "s121": {
        "_meta",
        "fs",
        "terminal",
        "session",
        "auth",
        "elicitation",
        "plan",
        "nes",
        "positionEncodings",
    },
    "s240": {"_meta", "fs", "terminal", "session", "auth", "elicitation", "plan", "subagents"},
}


@pytest.mark.parametrize("key", VERSIONS)
def test_update_tags_per_version(features: dict[str, SchemaFeatures], key: str) -> None:
    assert features[key].update_tags == EXPECTED_TAGS[key]


def test_notice_only_in_240_and_compaction_from_121(features: dict[str, SchemaFeatures]) -> None:
    assert [k for k in sorted(features) if features[k].has_update("notice")] == ["s240"]
    assert [k for k in sorted(features) if features[k].has_update("compaction_update")] == [
        "s121",
        "s240",
    ]


@pytest.mark.parametrize("key", VERSIONS)
def test_enums_and_capability_fields(features: dict[str, SchemaFeatures], key: str) -> None:
    f = features[key]
    assert f.package == f"acp_{key}"
    assert f.protocol_version == 1
    assert f.permission_option_kinds == (
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    )
    assert f.has_reject_always
    assert f.tool_kinds == TOOL_KINDS
    assert f.client_session_capabilities == EXPECTED_SESSION_CAPS[key]
    assert f.client_capabilities == EXPECTED_CLIENT_CAPS[key]


def test_method_table_stability(features: dict[str, SchemaFeatures]) -> None:
    create = {k: f.client_method("elicitation/create") for k, f in features.items()}
    # elicitation became stable in schema-v1.21.0.
    assert {k: m.unstable for k, m in create.items() if m} == {
        "s119": True,
        "s121": False,
        "s240": False,
    }
    for f in features.values():
        read = f.client_method("fs/read_text_file")
        assert read is not None and read.side == "client" and read.kind == "request"
        assert not read.unstable
        cancel = f.client_method("$/cancel_request")
        assert cancel is not None and cancel.side == "protocol" and not cancel.unstable
        assert f.client_method("session/new") is None  # agent side
        assert f.client_method("no/such_method") is None
    status = features["s240"].client_method("auth/status_update")
    assert status is not None and status.unstable
    assert features["s119"].client_method("auth/status_update") is None


def test_default_features_are_the_committed_bindings(features: dict[str, SchemaFeatures]) -> None:
    # The repo's schema/ is what acp_v1 was generated from.
    committed, s240 = default_features(), features["s240"]
    assert committed.package == "acp_v1" and s240.package == "acp_s240"
    assert committed.models.__name__ == "acp_v1.models"
    assert committed == replace(s240, package="acp_v1", models=committed.models)
    assert committed != s240
    assert default_features() is default_features()


def _stable_and_unstable_tags(schema_dir: Path) -> tuple[set[str], set[str]]:
    out = []
    for name in ("schema.json", "schema.unstable.json"):
        doc = json.loads((schema_dir / name).read_text())
        members = doc["$defs"]["SessionUpdate"]["oneOf"]
        out.append({m["properties"]["sessionUpdate"]["const"] for m in members})
    return out[0], out[1]


def test_policy_matches_schemas(schema_dirs: dict[str, Path]) -> None:
    """The hand-kept gate table agrees with the vendored schemas and covers every tag."""
    assert set(BASELINE_UPDATES) == BASELINE_11
    stable_gated = {t for t, g in GATED_UPDATES.items() if not g.unstable}
    unstable_gated = {t for t, g in GATED_UPDATES.items() if g.unstable}
    for key, schema_dir in schema_dirs.items():
        stable, unstable = _stable_and_unstable_tags(schema_dir)
        assert stable >= BASELINE_11, key
        assert not (stable & unstable_gated), key
        assert unstable <= BASELINE_11 | set(GATED_UPDATES), f"{key}: ungated tags"
    stable_240, _ = _stable_and_unstable_tags(schema_dirs["s240"])
    assert stable_240 == BASELINE_11 | stable_gated


def test_bad_bindings_fail_loudly(bindings: dict[str, ModuleType]) -> None:
    lonely = types.ModuleType("models")
    with pytest.raises(SchemaIntrospectionError, match="not a module inside a package"):
        read_features(lonely)
    orphan = types.ModuleType("no_such_pkg.models")
    with pytest.raises(SchemaIntrospectionError, match=r"cannot import no_such_pkg\.methods"):
        read_features(orphan)
    # A models module of a real package that lacks the session/update union.
    stripped = types.ModuleType("acp_s240.stripped")
    for name in (
        "KnownPermissionOptionKind",
        "KnownToolKind",
        "ClientCapabilities",
        "ClientSessionCapabilities",
    ):
        stripped.__dict__[name] = getattr(bindings["s240"], name)
    with pytest.raises(SchemaIntrospectionError, match="defines no KnownSessionUpdate"):
        read_features(stripped)
    # An alias of the wrong form.
    stripped.__dict__["KnownSessionUpdate"] = bindings["s240"].KnownSessionUpdate
    stripped.__dict__["KnownPermissionOptionKind"] = bindings["s240"].KnownSessionUpdate
    with pytest.raises(SchemaIntrospectionError, match="not a Literal alias"):
        read_features(stripped)


def test_lazy_features_read_the_update_models_on_first_use(
    bindings: dict[str, ModuleType],
) -> None:
    stripped = types.ModuleType("acp_s240.stripped")
    for name in ("ClientCapabilities", "ClientSessionCapabilities"):
        stripped.__dict__[name] = getattr(bindings["s240"], name)
    lazy = read_features(stripped, lazy=True)  # enough to answer initialize
    assert lazy.protocol_version == 1 and "fs" in lazy.client_capabilities
    with pytest.raises(SchemaIntrospectionError, match="defines no KnownSessionUpdate"):
        _ = lazy.update_tags
    stripped.__dict__["KnownSessionUpdate"] = bindings["s240"].KnownSessionUpdate
    assert "agent_message_chunk" in lazy.update_tags
