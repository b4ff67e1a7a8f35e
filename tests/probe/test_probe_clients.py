"""Real ``initialize`` params, shaped like those the clients in client-quirks.md send.

Each is parsed into the committed bindings' typed ``InitializeRequest`` and probed;
the expectations come from the reference tables, not from the code.
"""

from __future__ import annotations

import json
from dataclasses import fields, replace
from typing import Any

import pytest

from acp_v1.models import InitializeRequest
from acpwire.probe import (
    CONSERVATIVE,
    KNOWN_CLIENTS,
    PROFILES,
    ClientSignals,
    ConnectionProbe,
    KnownClient,
    QuirkProfile,
)

ALL_KINDS = ("allow_once", "allow_always", "reject_once", "reject_always")
NO_REJECT_ALWAYS = ("allow_once", "allow_always", "reject_once")
FS_TT = {"fs": {"readTextFile": True, "writeTextFile": True}}
FS_FF = {"fs": {"readTextFile": False, "writeTextFile": False}}

CLIENTS: dict[str, dict[str, Any]] = {
    "zed": {
        "protocolVersion": 1,
        "clientInfo": {"name": "zed", "title": "Zed Preview", "version": "0.212.3"},
        "clientCapabilities": {
            **FS_TT,
            "terminal": True,
            "auth": {"terminal": True},
            "elicitation": {"form": {}, "url": {}},
            "session": {"configOptions": {"boolean": {}}},
            "_meta": {"terminal_output": True, "terminal-auth": True},
        },
    },
    "zed_beta": {
        "protocolVersion": 1,
        "clientInfo": {"name": "zed", "title": "Zed Nightly", "version": "0.213.0"},
        "clientCapabilities": {
            **FS_TT,
            "terminal": True,
            "session": {"configOptions": {"boolean": {}}, "notices": {}, "compaction": {}},
        },
    },
    # 2025.3 sent no clientInfo; the Kotlin SDK's envelope "type" key is ignored upstream.
    "jetbrains_2025_3": {
        "protocolVersion": 1,
        "clientCapabilities": {**FS_FF, "terminal": False, "_meta": {"terminal-auth": True}},
    },
    "jetbrains_2026_1": {
        "protocolVersion": 1,
        "clientInfo": {
            "name": "JetBrains.IntelliJ IDEA",
            "title": "IntelliJ IDEA 2026.1 EAP",
            "version": "2026.1 EAP",
        },
        "clientCapabilities": {**FS_TT, "terminal": False},
    },
    "jetbrains_air": {
        "protocolVersion": 1,
        "clientCapabilities": {
            **FS_TT,
            "terminal": True,
            "_meta": {
                "jetbrains": {"air": {"version": 1, "capabilities": ["planFile", "diffPatch"]}}
            },
        },
    },
    "codecompanion": {
        "protocolVersion": 1,
        "clientInfo": {"name": "CodeCompanion.nvim", "version": "1.0.0"},
        "clientCapabilities": FS_TT,
    },
    "avante": {"protocolVersion": 1, "clientCapabilities": FS_TT},
    "marimo": {"protocolVersion": 1, "clientCapabilities": FS_TT},
    "agentic": {
        "protocolVersion": 1,
        "clientInfo": {"name": "Agentic.nvim", "version": "0.0.1"},
        "clientCapabilities": {
            **FS_FF,
            "terminal": False,
            "session": {"configOptions": {"boolean": {}}},
        },
    },
    "agent_shell": {
        "protocolVersion": 1,
        "clientInfo": {"name": "agent-shell", "title": "Emacs Agent Shell", "version": "0.79.2"},
        "clientCapabilities": {**FS_TT, "terminal": True, "elicitation": {"form": {}}},
    },
    "acpx": {
        "protocolVersion": 1,
        "clientInfo": {"name": "acpx", "version": "0.1.0"},
        "clientCapabilities": {**FS_TT, "terminal": True},
    },
    "toad": {
        "protocolVersion": 1,
        "clientInfo": {"name": "toad", "title": "Toad", "version": "0.6.4"},
        "clientCapabilities": {**FS_TT, "terminal": True},
    },
    "vscode_acp_client": {
        "protocolVersion": 1,
        "clientInfo": {"name": "vscode-acp-client", "version": "0.3.1"},
        "clientCapabilities": {**FS_TT, "terminal": True},
    },
    "vscode_acp_dec2025": {
        "protocolVersion": 1,
        "clientInfo": {"name": "vscode-acp", "version": "0.0.1"},
        "clientCapabilities": {},
    },
    "obsidian": {
        "protocolVersion": 1,
        "clientInfo": {
            "name": "obsidian-agent-client",
            "title": "Agent Client for Obsidian",
            "version": "0.9.0",
        },
        "clientCapabilities": {**FS_FF, "terminal": True},
    },
    "bare_unknown": {"protocolVersion": 1},
    "null_caps": {"protocolVersion": 1, "clientCapabilities": None, "clientInfo": None},
}


def probe(name: str, **kwargs: Any) -> ConnectionProbe:
    return ConnectionProbe.from_initialize(
        InitializeRequest.model_validate(CLIENTS[name]), **kwargs
    )


# name: (profile, fs read, fs write, terminal, elicit form, elicit url, boolean config, terminal auth)
CAPABILITIES = {
    "zed": ("zed", True, True, True, True, True, True, True),
    "zed_beta": ("zed", True, True, True, False, False, True, False),
    "jetbrains_2025_3": ("unknown", False, False, False, False, False, False, False),
    "jetbrains_2026_1": ("jetbrains", True, True, False, False, False, False, False),
    "jetbrains_air": ("jetbrains-air", True, True, True, False, False, False, False),
    "codecompanion": ("codecompanion", True, True, False, False, False, False, False),
    "avante": ("unknown", True, True, False, False, False, False, False),
    "marimo": ("unknown", True, True, False, False, False, False, False),
    "agentic": ("unknown", False, False, False, False, False, True, False),
    "agent_shell": ("agent-shell", True, True, True, True, False, False, False),
    "acpx": ("acpx", True, True, True, False, False, False, False),
    "toad": ("toad", True, True, True, False, False, False, False),
    "vscode_acp_client": ("vscode-acp-client", True, True, True, False, False, False, False),
    "vscode_acp_dec2025": ("vscode-acp", False, False, False, False, False, False, False),
    "obsidian": ("obsidian", False, False, True, False, False, False, False),
    "bare_unknown": ("unknown", False, False, False, False, False, False, False),
    "null_caps": ("unknown", False, False, False, False, False, False, False),
}


@pytest.mark.parametrize("name", sorted(CAPABILITIES))
def test_capabilities(name: str) -> None:
    p = probe(name)
    got = (
        p.profile.family,
        p.can_read_files,
        p.can_write_files,
        p.can_use_terminal,
        p.can_elicit_form,
        p.can_elicit_url,
        p.supports_boolean_config,
        p.can_offer_terminal_auth,
    )
    assert got == CAPABILITIES[name]
    assert p.protocol_version == 1
    # describe() is one JSON line and agrees with the properties.
    described = json.loads(json.dumps(p.describe()))
    assert described["profile"] == got[0]
    assert (described["fs_read"], described["fs_write"], described["terminal"]) == got[1:4]


@pytest.mark.parametrize("name", sorted(CAPABILITIES))
def test_never_an_unadvertised_request(name: str) -> None:
    p = probe(name)
    assert p.may_call("fs/read_text_file") == p.signals.fs_read
    assert p.may_call("fs/write_text_file") == p.signals.fs_write
    for method in ("terminal/create", "terminal/output", "terminal/kill", "terminal/release"):
        assert p.may_call(method) == p.signals.terminal
    assert p.may_call("session/update") and p.may_call("session/request_permission")
    assert p.may_call("$/cancel_request")
    # Unstable, agent side, or unknown: never.
    for method in ("auth/status_update", "mcp/message", "session/new", "nes/suggest", "x/y"):
        assert not p.may_call(method), method


def test_client_info_is_optional_and_read_when_present() -> None:
    assert probe("bare_unknown").client is None
    assert probe("null_caps").client_name is None
    zed = probe("zed")
    assert zed.client is not None
    assert (zed.client_name, zed.client.title, zed.client.version) == (
        "zed",
        "Zed Preview",
        "0.212.3",
    )
    assert zed.detected_by == "clientInfo.name"
    assert zed.streams_terminal_output_meta and zed.signals.terminal_auth_meta
    assert probe("jetbrains_2025_3").signals.terminal_auth_meta


def test_null_and_missing_capabilities_mean_nothing() -> None:
    for name in ("bare_unknown", "null_caps"):
        p = probe(name)
        assert p.signals == ClientSignals()
        assert p.profile == CONSERVATIVE and p.detected_by is None
        assert p.describe()["extra_updates"] == []


def test_name_detection_is_case_insensitive() -> None:
    params = dict(
        CLIENTS["codecompanion"], clientInfo={"name": "  codecompanion.NVIM ", "version": "1"}
    )
    p = ConnectionProbe.from_initialize(InitializeRequest.model_validate(params))
    assert p.profile.family == "codecompanion"
    pycharm = dict(
        CLIENTS["jetbrains_2026_1"], clientInfo={"name": "JetBrains.PyCharm", "version": "1"}
    )
    assert ConnectionProbe.from_initialize(
        InitializeRequest.model_validate(pycharm)
    ).profile.family == ("jetbrains")


def test_air_is_detected_by_meta_even_with_a_name() -> None:
    params = dict(CLIENTS["jetbrains_air"], clientInfo={"name": "zed", "version": "1"})
    p = ConnectionProbe.from_initialize(InitializeRequest.model_validate(params))
    assert (p.profile.family, p.detected_by) == ("jetbrains-air", "_meta.jetbrains.air")
    assert p.signals.air_capabilities == frozenset({"planFile", "diffPatch"})


def test_air_meta_shapes() -> None:
    def air(value: object) -> frozenset[str] | None:
        return ClientSignals.from_wire({"_meta": {"jetbrains": {"air": value}}}).air_capabilities

    assert air({"version": 1, "capabilities": ["a", 3, "b"]}) == frozenset({"a", "b"})
    assert air({"version": "1", "capabilities": ["a"]}) == frozenset()  # no integer version
    assert air({"version": True, "capabilities": ["a"]}) == frozenset()
    assert air({"version": 2}) == frozenset()
    assert air(["not", "an", "object"]) is None
    assert ClientSignals.from_wire({"_meta": {"jetbrains": 1}}).air_capabilities is None


def test_markers_need_an_object_and_flags_need_true() -> None:
    s = ClientSignals.from_wire(
        {
            "fs": {"readTextFile": "true", "writeTextFile": 1},
            "terminal": None,
            "elicitation": {"form": None, "url": True},
            "session": {"notices": {}, "compaction": None, "configOptions": {"boolean": {}}},
        }
    )
    assert (s.fs_read, s.fs_write, s.terminal) == (False, False, False)
    assert (s.elicitation_form, s.elicitation_url) == (False, False)
    assert (s.notices, s.compaction, s.config_boolean) == (True, False, True)
    assert ClientSignals.from_wire(["not", "an", "object"]) == ClientSignals()


# --- the quirk table: every row, every quirk ----------------------------------------------

#: family -> a client of CLIENTS that must be recognised as that family.
ROW_EXAMPLES = {
    "zed": "zed",
    "jetbrains": "jetbrains_2026_1",
    "codecompanion": "codecompanion",
    "agent-shell": "agent_shell",
    "acpx": "acpx",
    "vscode-acp-client": "vscode_acp_client",
    "vscode-acp": "vscode_acp_dec2025",
    "obsidian": "obsidian",
    "toad": "toad",
}


def test_every_table_row_is_exercised() -> None:
    assert {row.profile.family for row in KNOWN_CLIENTS} == set(ROW_EXAMPLES)
    assert set(PROFILES) == set(ROW_EXAMPLES) | {"unknown", "jetbrains-air"}


@pytest.mark.parametrize(("family", "client"), sorted(ROW_EXAMPLES.items()))
def test_row_detected(family: str, client: str) -> None:
    p = probe(client)
    assert p.profile is PROFILES[family]
    assert p.detected_by == "clientInfo.name"


#: family -> the fields where the row departs from CONSERVATIVE, with the reference's value.
DEPARTURES: dict[str, dict[str, object]] = {
    "zed": {"shows_mode_updates": True, "reads_config_options": True},
    "jetbrains": {"shows_mode_updates": True, "reads_config_options": True},
    "jetbrains-air": {"shows_mode_updates": True, "reads_config_options": True},
    "codecompanion": {
        "rejects_unknown_update_variants": False,
        "offers_reject_always": False,
        "keys_options_by_kind": True,
        "shows_first_content_only": True,
        "reads_config_options": True,
    },
    "agent-shell": {"offers_reject_always": False, "keys_options_by_kind": True},
    "acpx": {"replay_after_load_response_ok": True},
    "vscode-acp-client": {},
    "vscode-acp": {},
    "obsidian": {
        "shows_mode_updates": True,
        "reads_config_options": True,
        "renders_tool_content_blocks": False,
    },
    "toad": {
        "answers_unknown_requests": True,
        "shows_mode_updates": True,
        "keys_options_by_kind": True,
        "rejected_updates": frozenset({"session_info_update", "config_option_update"}),
    },
    "unknown": {},
}


@pytest.mark.parametrize("family", sorted(DEPARTURES))
def test_row_departures(family: str) -> None:
    profile = PROFILES[family]
    departures = {
        f.name: getattr(profile, f.name)
        for f in fields(QuirkProfile)
        if f.name not in ("family", "label")
        and getattr(profile, f.name) != getattr(CONSERVATIVE, f.name)
    }
    assert departures == DEPARTURES[family]


def test_unknown_client_gets_every_precaution() -> None:
    for name in ("bare_unknown", "null_caps", "avante", "marimo", "jetbrains_2025_3", "agentic"):
        p = probe(name)
        assert p.profile is CONSERVATIVE, name
        assert not p.may_send_before_session_response
        assert not p.may_send_replay_after_load_response
        assert not p.may_request_permission_outside_prompt
        assert p.treat_cancelled_outcome_as == "deny"
        assert p.sync_response_budget_s == 20.0
        assert not p.may_call("_zed/extension")  # may never be answered
        assert p.profile.rejects_unknown_update_variants
        assert p.profile.empty_read_may_mean_missing
        assert not (p.profile.shows_mode_updates or p.profile.reads_config_options)


def test_reject_always_dropped_where_the_ui_leaves_it_out() -> None:
    assert probe("codecompanion").permission_option_kinds() == NO_REJECT_ALWAYS
    assert probe("agent_shell").permission_option_kinds() == NO_REJECT_ALWAYS
    for name in ("zed", "acpx", "obsidian", "bare_unknown", "avante"):
        assert probe(name).permission_option_kinds() == ALL_KINDS, name


def test_codecompanion_quirks() -> None:
    p = probe("codecompanion")
    assert not p.may_request_permission_outside_prompt
    assert p.sync_response_budget_s == 20.0
    assert not p.may_call("_codecompanion/anything")
    assert p.profile.empty_read_may_mean_missing
    assert not p.profile.shows_mode_updates and p.profile.reads_config_options


def test_toad_answers_unknown_methods_so_extensions_may_go_there() -> None:
    assert probe("toad").may_call("_toad/anything")
    assert not probe("zed").may_call("_zed/anything")


def test_toad_is_sent_no_update_kinds_it_rejects() -> None:
    """Toad 0.6.20 answers session_info_update and config_option_update with an error."""
    toad, zed = probe("toad"), probe("zed")
    for tag in ("session_info_update", "config_option_update"):
        assert not toad.can_send_update(tag) and tag not in toad.sendable_updates()
        assert zed.can_send_update(tag)
    assert toad.can_send_update("agent_message_chunk")
    assert toad.can_send_update("current_mode_update")


def test_dismissal_clients_deny_on_cancelled() -> None:
    for name in ("vscode_acp_client", "acpx"):
        p = probe(name)
        assert p.profile.cancelled_outcome_is_dismissal
        assert p.treat_cancelled_outcome_as == "deny"


def test_acpx_takes_replay_after_the_load_response() -> None:
    assert probe("acpx").may_send_replay_after_load_response
    assert not probe("zed").may_send_replay_after_load_response


def test_zed_and_jetbrains_get_nothing_before_the_session_response() -> None:
    for name in ("zed", "jetbrains_2026_1", "jetbrains_air"):
        assert not probe(name).may_send_before_session_response, name


def test_strict_sdk_clients_are_marked() -> None:
    for name in (
        "zed",
        "acpx",
        "vscode_acp_client",
        "vscode_acp_dec2025",
        "obsidian",
        "jetbrains_2026_1",
    ):
        assert probe(name).profile.rejects_unknown_update_variants, name
    assert not probe("codecompanion").profile.rejects_unknown_update_variants


def test_obsidian_does_not_render_content_blocks() -> None:
    assert not probe("obsidian").profile.renders_tool_content_blocks
    assert probe("zed").profile.renders_tool_content_blocks


def test_table_drives_the_decisions() -> None:
    """A lenient row flips each table-driven decision; nothing is hard-coded per client."""
    lenient = replace(
        CONSERVATIVE,
        family="lenient",
        label="lenient test client",
        drops_updates_before_session_response=False,
        permission_requests_only_during_prompt=False,
        cancelled_outcome_is_dismissal=False,
        answers_unknown_requests=True,
        sync_timeout_s=300.0,
    )
    table = (KnownClient(lenient, names=frozenset({"lenient"})),)
    params = InitializeRequest.model_validate(
        {"protocolVersion": 1, "clientInfo": {"name": "Lenient", "version": "1"}}
    )
    p = ConnectionProbe.from_initialize(params, known_clients=table)
    assert p.profile is lenient
    assert p.may_send_before_session_response
    assert p.may_request_permission_outside_prompt
    assert p.treat_cancelled_outcome_as == "cancel_turn"
    assert p.may_call("_lenient/ext")
    assert p.sync_response_budget_s == 300.0
    # The same client against the real table is unknown and conservative.
    assert ConnectionProbe.from_initialize(params).profile is CONSERVATIVE


def test_initialize_decisions_leave_out_the_session_ones() -> None:
    p = ConnectionProbe.from_initialize(InitializeRequest(protocol_version=1))
    brief, sessions = p.describe(sessions=False), p.describe_sessions()
    assert set(sessions) == {"extra_updates", "permission_kinds"}
    assert p.describe() == {**brief, **sessions} and not set(brief) & set(sessions)
