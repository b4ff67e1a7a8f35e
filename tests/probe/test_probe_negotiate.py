"""``protocolVersion`` negotiation on raw wire values."""

from __future__ import annotations

import json

import pytest

from acp_v1.models import InitializeRequest
from acpwire.probe import ConnectionProbe, negotiate


@pytest.mark.parametrize(
    "raw",
    ["1", "2", "65535", "0", "-3", '"2025-11-25"', '"1"', "null", "true", "1.0", "[1]", "{}"],
)
def test_everything_is_answered_with_1(raw: str) -> None:
    assert negotiate(json.loads(raw)) == 1


def test_a_supported_version_is_echoed_and_others_get_the_latest() -> None:
    assert negotiate(2, supported=(1, 2)) == 2
    assert negotiate(1, supported=(1, 2)) == 1
    assert negotiate(3, supported=(1, 2)) == 2
    assert negotiate("2025-11-25", supported=(1, 2)) == 2
    assert negotiate(True, supported=(1, 2)) == 2  # `true` is not version 1


def test_no_supported_versions_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="at least one supported"):
        negotiate(1, supported=())


def test_probe_answers_the_bindings_version() -> None:
    p = ConnectionProbe.from_initialize(InitializeRequest.model_validate({"protocolVersion": 1}))
    assert p.protocol_version == 1 == p.features.protocol_version
    # The typed request refuses a date string; the raw path above is the one for that.
    with pytest.raises(ValueError):
        InitializeRequest.model_validate({"protocolVersion": "2025-11-25"})
