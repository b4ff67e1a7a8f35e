"""Permission options offered, answers interpreted, and the refusal texts."""

from __future__ import annotations

import json
import logging

import pytest

from acp_v1.models import (
    PermissionOption,
    RequestPermissionOutcomeCancelled,
    RequestPermissionOutcomeSelected,
    RequestPermissionResponse,
)
from acpwire.approval import (
    TIMED_OUT,
    Decision,
    build_command_options,
    build_edit_options,
    interpret_outcome,
    is_allowed,
    refusal_message,
    remembered_deny_message,
    to_seam_answer,
)

ALL_KINDS = frozenset({"allow_once", "allow_always", "reject_once", "reject_always"})
OFFERED = ("allow_once", "allow_session", "allow_always", "deny", "deny_always")


def shape(options: list[PermissionOption]) -> list[tuple[str, str]]:
    return [(o.option_id, str(o.kind)) for o in options]


def test_command_options_full_set() -> None:
    options = build_command_options(ALL_KINDS, allow_permanent=True)
    assert shape(options) == [
        ("allow_once", "allow_once"),
        ("allow_session", "allow_always"),
        ("allow_always", "allow_always"),
        ("deny", "reject_once"),
        ("deny_always", "reject_always"),
    ]
    assert len({o.name for o in options}) == len(options)
    wire = json.loads(options[0].model_dump_json(by_alias=True, exclude_none=True))
    assert wire == {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"}


def test_command_options_without_reject_always_or_permanent() -> None:
    no_reject_always = build_command_options(ALL_KINDS - {"reject_always"}, allow_permanent=True)
    assert [o.option_id for o in no_reject_always] == [
        "allow_once",
        "allow_session",
        "allow_always",
        "deny",
    ]
    no_permanent = build_command_options(frozenset(), allow_permanent=False)
    assert [o.option_id for o in no_permanent] == ["allow_once", "allow_session", "deny"]


def test_one_option_per_kind_keeps_the_session_grant() -> None:
    """For a client that keys options by kind (CodeCompanion, agent-shell) two
    ``allow_always`` options would look alike: the workspace-wide one is left out."""
    options = build_command_options(
        ALL_KINDS - {"reject_always"}, allow_permanent=True, one_per_kind=True
    )
    assert [(o.option_id, str(o.kind)) for o in options] == [
        ("allow_once", "allow_once"),
        ("allow_session", "allow_always"),
        ("deny", "reject_once"),
    ]
    kinds = [str(o.kind) for o in options]
    assert len(kinds) == len(set(kinds))


def test_one_time_override_offers_only_once_or_deny() -> None:
    """An override of the agent's own refusal covers one run: no scope to remember."""
    for allow_permanent in (True, False):
        options = build_command_options(ALL_KINDS, allow_permanent=allow_permanent, one_time=True)
        assert [(o.option_id, str(o.kind)) for o in options] == [
            ("allow_once", "allow_once"),
            ("deny", "reject_once"),
        ]


def test_edit_options() -> None:
    options = build_edit_options()
    assert [(o.option_id, o.name, str(o.kind)) for o in options] == [
        ("allow_once", "Allow edit", "allow_once"),
        ("allow_session", "Allow workspace edits for this session", "allow_always"),
        ("deny", "Deny", "reject_once"),
    ]
    assert [o.option_id for o in build_edit_options(allow_session=False)] == ["allow_once", "deny"]


def selected(option_id: str) -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=RequestPermissionOutcomeSelected(option_id=option_id))


OUTCOMES: dict[str, tuple[object, Decision]] = {
    "allow_once model": (selected("allow_once"), "once"),
    "allow_session raw response": (
        {"outcome": {"outcome": "selected", "optionId": "allow_session"}},
        "session",
    ),
    "allow_always raw outcome": ({"outcome": "selected", "optionId": "allow_always"}, "always"),
    "deny bare outcome model": (RequestPermissionOutcomeSelected(option_id="deny"), "deny"),
    "deny_always": (selected("deny_always"), "deny_always"),
    "cancelled model": (
        RequestPermissionResponse(outcome=RequestPermissionOutcomeCancelled()),
        "cancelled",
    ),
    "cancelled raw": ({"outcome": {"outcome": "cancelled"}}, "cancelled"),
    "timed out": (TIMED_OUT, "timeout"),
    "timeout error": (TimeoutError("60 s"), "timeout"),
    "request error": (RuntimeError("connection lost"), "invalid"),
    "None": (None, "invalid"),
    "garbage string": ("allow_once", "invalid"),
    "number": (42, "invalid"),
    "selected without id": ({"outcome": "selected"}, "invalid"),
    "unknown outcome kind": ({"outcome": {"outcome": "maybe"}}, "invalid"),
    "empty object": ({}, "invalid"),
}


@pytest.mark.parametrize(("outcome", "expected"), list(OUTCOMES.values()), ids=list(OUTCOMES))
def test_interpret_outcome(outcome: object, expected: Decision) -> None:
    assert interpret_outcome(outcome, OFFERED) == expected


def test_option_not_offered_is_invalid_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    offered = [o.option_id for o in build_command_options(frozenset(), allow_permanent=False)]
    with caplog.at_level(logging.WARNING, logger="acpwire.approval.permissions"):
        assert interpret_outcome(selected("allow_always"), offered) == "invalid"
        assert interpret_outcome(selected("deny_always"), offered) == "invalid"
    assert "'allow_always', which was not offered" in caplog.text
    # An id that was offered but is not one of ours maps to nothing: still refused.
    assert interpret_outcome(selected("yes"), ["yes"]) == "invalid"


def test_only_explicit_allows_allow() -> None:
    decisions: list[Decision] = [
        "once",
        "session",
        "always",
        "deny",
        "deny_always",
        "timeout",
        "cancelled",
        "invalid",
    ]
    assert [d for d in decisions if is_allowed(d)] == ["once", "session", "always"]
    assert [to_seam_answer(d) for d in decisions] == ["once", "session", "always"] + ["deny"] * 5
    with pytest.raises(ValueError, match="unknown approval decision"):
        is_allowed("yes")  # type: ignore[arg-type]  # bad input on purpose


def test_refusal_messages_are_distinct() -> None:
    refusals: list[Decision] = ["deny", "deny_always", "timeout", "cancelled", "invalid"]
    texts = [refusal_message(d, subject="command", timeout_s=60) for d in refusals]
    assert len(set(texts)) == len(texts)
    assert all(t.startswith("BLOCKED: ") and "the command was not run" in t for t in texts)
    assert texts[0] == "BLOCKED: the user denied this command; the command was not run."
    assert "approval timed out after 60 s" in texts[2]
    assert "not a denial" in texts[2] and "denied" not in texts[2]
    assert "cancelled" in texts[3]
    assert "no valid answer" in texts[4]
    edit = refusal_message("timeout", subject="edit", timeout_s=2.5)
    assert "approval timed out after 2.5 s" in edit and "the file was not modified" in edit
    assert refusal_message("deny", subject="edit") == (
        "BLOCKED: the user denied this edit; the file was not modified."
    )
    assert "always denied in this workspace" in remembered_deny_message("command")


def test_refusal_message_rejects_allows_and_missing_timeout() -> None:
    with pytest.raises(ValueError, match="no refusal message"):
        refusal_message("once", subject="command")
    with pytest.raises(ValueError, match="timeout in seconds"):
        refusal_message("timeout", subject="edit")
