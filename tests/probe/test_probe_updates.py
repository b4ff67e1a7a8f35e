"""``session/update`` variants, methods and kinds across bindings of each schema version.

The params are parsed by the same bindings the features come from, as on a real
connection built on those bindings.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from acpwire.probe import ConnectionProbe, SchemaFeatures, read_features
from tests.probe.expected import BASELINE_11, VERSIONS

EVERYTHING: dict[str, Any] = {
    "protocolVersion": 1,
    "clientInfo": {"name": "zed", "version": "1.0.0"},
    "clientCapabilities": {
        "fs": {"readTextFile": True, "writeTextFile": True},
        "terminal": True,
        "auth": {"terminal": True},
        "elicitation": {"form": {}, "url": {}},
        "session": {"configOptions": {"boolean": {}}, "notices": {}, "compaction": {}},
        "plan": {},
        "subagents": {},
    },
}
NOTHING: dict[str, Any] = {"protocolVersion": 1}


def make(
    bindings: dict[str, ModuleType],
    features: dict[str, SchemaFeatures],
    key: str,
    params: dict[str, Any],
    *,
    unstable: bool = False,
) -> ConnectionProbe:
    request = bindings[key].InitializeRequest.model_validate(params)
    return ConnectionProbe.from_initialize(request, features[key], unstable_opt_in=unstable)


@pytest.mark.parametrize("key", VERSIONS)
def test_baseline_always_and_only_it_without_capabilities(
    bindings: dict[str, ModuleType], features: dict[str, SchemaFeatures], key: str
) -> None:
    p = make(bindings, features, key, NOTHING)
    assert p.sendable_updates() == BASELINE_11
    for tag in BASELINE_11:
        assert p.can_send_update(tag)
    assert not p.can_send_update("no_such_variant")
    assert p.describe()["bindings"] == f"acp_{key}"


# key -> variants beyond the baseline a client advertising everything gets, without and
# with the agent's unstable opt-in.
EXTRA_STABLE = {"s119": set(), "s121": {"compaction_update", "compaction_summary_chunk"}}
EXTRA_STABLE["s240"] = EXTRA_STABLE["s121"] | {"notice"}
EXTRA_UNSTABLE = {"s119": {"plan_update", "plan_removed"}, "s121": {"plan_update", "plan_removed"}}
EXTRA_UNSTABLE["s240"] = EXTRA_UNSTABLE["s121"] | {
    "subagent_update",
    "session_message",
    "session_message_chunk",
}


@pytest.mark.parametrize("key", VERSIONS)
def test_gated_variants_follow_capabilities_and_bindings(
    bindings: dict[str, ModuleType], features: dict[str, SchemaFeatures], key: str
) -> None:
    stable = make(bindings, features, key, EVERYTHING)
    assert stable.sendable_updates() - BASELINE_11 == EXTRA_STABLE[key]
    opted_in = make(bindings, features, key, EVERYTHING, unstable=True)
    assert opted_in.sendable_updates() - BASELINE_11 == EXTRA_STABLE[key] | EXTRA_UNSTABLE[key]
    # Opting in does not bypass the client's capabilities.
    bare = make(bindings, features, key, NOTHING, unstable=True)
    assert bare.sendable_updates() == BASELINE_11


def test_notice_needs_both_the_capability_and_the_variant(
    bindings: dict[str, ModuleType], features: dict[str, SchemaFeatures]
) -> None:
    notices_only: dict[str, Any] = {
        "protocolVersion": 1,
        "clientCapabilities": {"session": {"notices": {}}},
    }
    assert make(bindings, features, "s240", notices_only).can_send_update("notice")
    assert not make(bindings, features, "s240", NOTHING).can_send_update("notice")
    # 1.21 bindings know neither the variant nor the capability (the parser drops it).
    p121 = make(bindings, features, "s121", notices_only)
    assert not p121.signals.notices and not p121.can_send_update("notice")
    compaction_only: dict[str, Any] = {
        "protocolVersion": 1,
        "clientCapabilities": {"session": {"compaction": {}}},
    }
    assert make(bindings, features, "s121", compaction_only).can_send_update("compaction_update")
    assert not make(bindings, features, "s119", compaction_only).can_send_update(
        "compaction_update"
    )


def test_elicitation_only_where_the_bindings_made_it_stable(
    bindings: dict[str, ModuleType], features: dict[str, SchemaFeatures]
) -> None:
    got = {
        key: (
            make(bindings, features, key, EVERYTHING).can_elicit_form,
            make(bindings, features, key, EVERYTHING).can_elicit_url,
        )
        for key in VERSIONS
    }
    assert got == {"s119": (False, False), "s121": (True, True), "s240": (True, True)}


@pytest.mark.parametrize("key", VERSIONS)
def test_reject_always_offered_where_the_schema_has_it(
    bindings: dict[str, ModuleType], features: dict[str, SchemaFeatures], key: str
) -> None:
    kinds = make(bindings, features, key, EVERYTHING).permission_option_kinds()
    assert kinds == ("allow_once", "allow_always", "reject_once", "reject_always")
    codecompanion = {
        "protocolVersion": 1,
        "clientInfo": {"name": "CodeCompanion.nvim", "version": "1.0.0"},
    }
    assert (
        "reject_always"
        not in make(bindings, features, key, codecompanion).permission_option_kinds()
    )


def test_reject_always_missing_from_older_bindings(bindings: dict[str, ModuleType]) -> None:
    from typing import Literal

    from typing_extensions import TypeAliasType

    from acp_v1.models import InitializeRequest

    older = ModuleType("acp_s240.older")
    for name in ("ClientCapabilities", "ClientSessionCapabilities", "KnownSessionUpdate"):
        setattr(older, name, getattr(bindings["s240"], name))
    older.KnownToolKind = bindings["s240"].KnownToolKind  # type: ignore[attr-defined]
    older.KnownPermissionOptionKind = TypeAliasType(  # type: ignore[attr-defined]
        "KnownPermissionOptionKind", Literal["allow_once", "allow_always", "reject_once"]
    )
    old = read_features(older)
    p = ConnectionProbe.from_initialize(InitializeRequest.model_validate(NOTHING), old)
    assert p.permission_option_kinds() == ("allow_once", "allow_always", "reject_once")
    assert not old.has_reject_always


@pytest.mark.parametrize("key", VERSIONS)
def test_tool_kind_falls_back_to_other(
    bindings: dict[str, ModuleType], features: dict[str, SchemaFeatures], key: str
) -> None:
    p = make(bindings, features, key, NOTHING)
    assert p.tool_kind("execute") == "execute"
    assert p.tool_kind("switch_mode") == "switch_mode"
    assert p.tool_kind("browse") == "other"


def test_unstable_methods_stay_off_even_with_opt_in(
    bindings: dict[str, ModuleType], features: dict[str, SchemaFeatures]
) -> None:
    p = make(bindings, features, "s240", EVERYTHING, unstable=True)
    assert not p.may_call("auth/status_update")
    assert not p.may_call("mcp/message")
    assert p.may_call("terminal/wait_for_exit")
    p119 = make(bindings, features, "s119", EVERYTHING, unstable=True)
    assert not p119.may_call("elicitation/create")
    assert not p119.may_call("mcp/connect")
