"""The generated method table against the schema's x-method / x-side and the SDK's meta files."""

from __future__ import annotations

import json
import types
import typing
from collections import defaultdict
from typing import Any

import pytest

from acp_v1 import PROTOCOL_VERSION, interfaces, methods, models as m, peers
from acp_v1.methods import METHODS, MethodSpec
from tests.generated.schema_facts import (
    SCHEMA_DIR,
    mechanical_handler,
    message_defs,
    reference_meta,
)

Key = tuple[str, str, str]
"""(method, side, kind)"""

META_TABLES = {
    "agentMethods": "agent",
    "clientMethods": "client",
    "protocolMethods": "protocol",
    "proxyMethods": "proxy",
}


def _expected_table() -> dict[Key, tuple[Any, Any, bool]]:
    """(method, side, kind) -> (params type, result type, unstable), from the schema alone."""
    stable_methods = {method for method, _ in message_defs(unstable=False).values()}
    roles: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for name, (method, side) in message_defs(unstable=True).items():
        role = "notification"
        if name.endswith("Request"):
            role = "request"
        elif name.endswith("Response"):
            role = "response"
        assert role not in roles[(method, side)], f"two {role} definitions for {method}"
        roles[(method, side)][role] = name
    table: dict[Key, tuple[Any, Any, bool]] = {}
    for (method, side), named in roles.items():
        unstable = method not in stable_methods
        if "request" in named:
            result = getattr(m, named["response"])
            table[(method, side, "request")] = (getattr(m, named["request"]), result, unstable)
        if "notification" in named:
            table[(method, side, "notification")] = (
                getattr(m, named["notification"]),
                None,
                unstable,
            )
    return table


def _actual_table() -> dict[Key, tuple[Any, Any, bool]]:
    table: dict[Key, tuple[Any, Any, bool]] = {
        (s.method, s.side, s.kind): (s.params, s.result, s.unstable) for s in METHODS
    }
    assert len(table) == len(METHODS), "duplicate rows in METHODS"
    return table


def _meta_pairs(name: str) -> set[tuple[str, str]]:
    meta = reference_meta(name)
    assert meta["version"] == PROTOCOL_VERSION
    return {
        (side, method)
        for table, side in META_TABLES.items()
        for method in meta.get(table, {}).values()
    }


def test_method_table_matches_schema_annotations() -> None:
    expected = _expected_table()
    actual = _actual_table()
    assert sorted(actual) == sorted(expected)
    for key, (params, result, unstable) in expected.items():
        got_params, got_result, got_unstable = actual[key]
        assert got_params is params, f"{key}: params {got_params!r}, schema names {params!r}"
        assert got_result is result, f"{key}: result {got_result!r}, schema names {result!r}"
        assert got_unstable == unstable, f"{key}: unstable={got_unstable}"


def test_stable_methods_equal_sdk_meta() -> None:
    stable = {(s.side, s.method) for s in METHODS if not s.unstable}
    assert stable == _meta_pairs("meta.extracted.json")


def test_all_methods_equal_sdk_unstable_meta_including_proxy_table() -> None:
    everything = {(s.side, s.method) for s in METHODS}
    expected = _meta_pairs("meta.unstable.extracted.json")
    assert everything == expected
    assert {("proxy", "proxy/initialize"), ("proxy", "proxy/successor")} <= expected


def test_well_known_rows() -> None:
    table = _actual_table()
    assert table[("session/prompt", "agent", "request")] == (
        m.PromptRequest,
        m.PromptResponse,
        False,
    )
    assert table[("session/update", "client", "notification")] == (
        m.SessionNotification,
        None,
        False,
    )
    assert table[("$/cancel_request", "protocol", "notification")][0] is m.CancelRequestNotification
    assert table[("session/fork", "agent", "request")][2] is True
    assert methods.AGENT_REQUESTS["session/new"].params is m.NewSessionRequest
    assert methods.CLIENT_REQUESTS["fs/read_text_file"].result is m.ReadTextFileResponse


def test_side_tables_partition_the_method_table() -> None:
    tables = {
        ("agent", "request"): methods.AGENT_REQUESTS,
        ("agent", "notification"): methods.AGENT_NOTIFICATIONS,
        ("client", "request"): methods.CLIENT_REQUESTS,
        ("client", "notification"): methods.CLIENT_NOTIFICATIONS,
        ("protocol", "notification"): methods.PROTOCOL_NOTIFICATIONS,
    }
    for (side, kind), table in tables.items():
        expected = {s.method: s for s in METHODS if s.side == side and s.kind == kind}
        assert table == expected, (side, kind)


def _expected_handler(spec: MethodSpec) -> str:
    base = mechanical_handler(spec.method)
    both_kinds = {s.kind for s in METHODS if s.side == spec.side and s.method == spec.method}
    if spec.kind == "notification" and both_kinds == {"request", "notification"}:
        return base + "_notification"
    return base


@pytest.mark.parametrize("spec", METHODS, ids=lambda s: f"{s.side}:{s.kind}:{s.method}")
def test_handler_names_are_mechanical(spec: MethodSpec) -> None:
    assert spec.handler == _expected_handler(spec)
    assert spec.handler.isidentifier()
    assert getattr(methods, mechanical_handler(spec.method).upper()) == spec.method


def test_mechanical_handler_rule() -> None:
    assert mechanical_handler("fs/read_text_file") == "fs_read_text_file"
    assert mechanical_handler("$/cancel_request") == "cancel_request"
    assert mechanical_handler("document/didOpen") == "document_did_open"


def test_handler_names_are_unique_per_side_and_match_sdk_meta_keys() -> None:
    by_side: dict[str, list[str]] = defaultdict(list)
    for spec in METHODS:
        by_side[spec.side].append(spec.handler)
    for side, handlers in by_side.items():
        assert len(handlers) == len(set(handlers)), side
    meta = reference_meta("meta.unstable.extracted.json")
    for table, side in META_TABLES.items():
        for key, method in meta[table].items():
            generated = {s.handler for s in METHODS if s.side == side and s.method == method}
            assert key in generated, f"{side} {method}: SDK key {key}, generated {generated}"


def _declared(cls: type) -> set[str]:
    return {
        name for name, value in vars(cls).items() if callable(value) and not name.startswith("_")
    }


@pytest.mark.parametrize(
    ("side", "cls"),
    [
        ("agent", interfaces.Agent),
        ("client", interfaces.Client),
        ("agent", peers.AgentPeer),
        ("client", peers.ClientPeer),
    ],
)
def test_interfaces_and_peers_follow_the_table(side: str, cls: type) -> None:
    specs = [s for s in METHODS if s.side == side]
    assert _declared(cls) == {s.handler for s in specs}
    for spec in specs:
        hints = typing.get_type_hints(getattr(cls, spec.handler))
        assert hints["params"] is spec.params, spec.handler
        expected_return = types.NoneType if spec.result is None else spec.result
        assert hints["return"] is expected_return, spec.handler


def test_protocol_version_matches_the_schema_lock() -> None:
    lock = json.loads((SCHEMA_DIR / "schema.lock.json").read_text())
    assert PROTOCOL_VERSION == lock["protocolVersion"] == 1
