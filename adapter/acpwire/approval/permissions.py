"""The options offered in ``session/request_permission`` and how to read the client's answer.

Option ids are ours and map one to one to a :data:`Decision`. ACP has no "for this session"
kind, so ``allow_session`` is sent with kind ``allow_always`` and told apart by its id.
Reading an answer never approves by default: a missing, malformed, cancelled or unoffered
answer is a refusal, and a timeout is reported as such (not as a user's denial).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Collection, Mapping, Set
from typing import Final, Literal, get_args

from pydantic import TypeAdapter, ValidationError

from acp_v1 import DECODE, models as m
from acpwire.agent.seam import ApprovalAnswer

__all__ = [
    "ALLOWING",
    "TIMED_OUT",
    "Decision",
    "OptionId",
    "build_access_options",
    "build_command_options",
    "build_edit_options",
    "interpret_outcome",
    "is_allowed",
    "to_seam_answer",
]

_log = logging.getLogger(__name__)

OptionId = Literal["allow_once", "allow_session", "allow_always", "deny", "deny_always"]
Decision = Literal[
    "once", "session", "always", "deny", "deny_always", "timeout", "cancelled", "invalid"
]
ALLOWING: Final[frozenset[Decision]] = frozenset({"once", "session", "always"})

_DECISION_BY_ID: Final[Mapping[str, Decision]] = {
    "allow_once": "once",
    "allow_session": "session",
    "allow_always": "always",
    "deny": "deny",
    "deny_always": "deny_always",
}


@functools.cache
def _outcome_adapter() -> TypeAdapter[m.RequestPermissionOutcome]:
    # Built on first use: building it at import would build the deferred models too.
    return TypeAdapter(m.RequestPermissionOutcome)


_DECISIONS: Final = frozenset(get_args(Decision))


class _TimedOut:
    """The type of :data:`TIMED_OUT`."""

    def __repr__(self) -> str:
        return "TIMED_OUT"


TIMED_OUT: Final = _TimedOut()
"""Pass to :func:`interpret_outcome` when no answer arrived in time."""


def _option(
    option_id: OptionId, name: str, kind: m.KnownPermissionOptionKind
) -> m.PermissionOption:
    return m.PermissionOption(option_id=option_id, name=name, kind=kind)


def build_command_options(
    kinds_available: Set[str],
    *,
    allow_permanent: bool,
    one_time: bool = False,
    one_per_kind: bool = False,
) -> list[m.PermissionOption]:
    """Options for a dangerous shell command, "Allow once" first.

    ``kinds_available`` holds the option kinds the client accepts (from the capability
    probe); ``deny_always`` is offered only when it contains ``reject_always``.
    ``allow_permanent=False`` leaves out the persistent ``allow_always``, and so does
    ``one_per_kind`` (a client that keys options by kind: of the two ``allow_always``
    grants, the session one stays); ``one_time`` (an override of the agent's own
    refusal) offers only ``allow_once`` and ``deny``.
    """
    if one_time:
        return [
            _option("allow_once", "Allow once", "allow_once"),
            _option("deny", "Deny", "reject_once"),
        ]
    options = [
        _option("allow_once", "Allow once", "allow_once"),
        _option("allow_session", "Allow for this session", "allow_always"),
    ]
    if allow_permanent and not one_per_kind:
        options.append(_option("allow_always", "Always allow in this workspace", "allow_always"))
    options.append(_option("deny", "Deny", "reject_once"))
    if "reject_always" in kinds_available:
        options.append(_option("deny_always", "Always deny in this workspace", "reject_always"))
    return options


def build_edit_options(*, allow_session: bool = True) -> list[m.PermissionOption]:
    """Options for a file edit (one request covers every file of the edit); the session
    grant only when every file is an unprotected workspace file (it covers only those)."""
    options = [_option("allow_once", "Allow edit", "allow_once")]
    if allow_session:
        options.append(
            _option("allow_session", "Allow workspace edits for this session", "allow_always")
        )
    options.append(_option("deny", "Deny", "reject_once"))
    return options


def build_access_options(kind: Literal["read", "tool"]) -> list[m.PermissionOption]:
    """Options for a read (allowed once: that file, for the session) or an MCP tool call
    (also "always allow this tool" in this workspace)."""
    if kind == "read":
        return [
            _option("allow_once", "Allow reading this file", "allow_once"),
            _option("deny", "Deny", "reject_once"),
        ]
    return [
        _option("allow_once", "Allow once", "allow_once"),
        _option("allow_always", "Always allow this tool in this workspace", "allow_always"),
        _option("deny", "Deny", "reject_once"),
    ]


def _parse(outcome: object) -> object:
    """A typed outcome from a response model, a raw JSON object or an outcome model."""
    if isinstance(outcome, m.RequestPermissionResponse):
        return outcome.outcome
    if isinstance(outcome, Mapping):
        try:
            if isinstance(outcome.get("outcome"), Mapping):
                response = m.RequestPermissionResponse.model_validate(outcome, context=DECODE)
                return response.outcome
            return _outcome_adapter().validate_python(outcome, context=DECODE)
        except ValidationError as exc:
            _log.warning("malformed permission answer %r: %s", outcome, exc)
            return None
    return outcome


def interpret_outcome(outcome: object, offered_ids: Collection[str]) -> Decision:
    """Map the client's answer to a :data:`Decision`.

    ``outcome`` may be a :class:`RequestPermissionResponse`, its ``outcome``, the same as a
    raw JSON object, :data:`TIMED_OUT` (or a :class:`TimeoutError`), an exception raised by
    the request, or anything else (``invalid``). An option id that was not in
    ``offered_ids`` is ``invalid``.
    """
    if outcome is TIMED_OUT or isinstance(outcome, TimeoutError):
        return "timeout"
    if isinstance(outcome, BaseException):
        _log.warning("permission request failed, treated as a refusal: %r", outcome)
        return "invalid"
    parsed = _parse(outcome)
    if isinstance(parsed, m.RequestPermissionOutcomeCancelled):
        return "cancelled"
    if isinstance(parsed, m.SelectedPermissionOutcome):
        option_id = parsed.option_id
        decision = _DECISION_BY_ID.get(option_id)
        if option_id not in offered_ids or decision is None:
            _log.warning(
                "client chose option %r, which was not offered (%s); treated as a refusal",
                option_id,
                ", ".join(sorted(offered_ids)),
            )
            return "invalid"
        return decision
    _log.warning("unusable permission answer %r; treated as a refusal", outcome)
    return "invalid"


def is_allowed(decision: Decision) -> bool:
    """True only for the explicit allow decisions."""
    if decision not in _DECISIONS:
        raise ValueError(f"unknown approval decision {decision!r}")
    return decision in ALLOWING


def to_seam_answer(decision: Decision) -> ApprovalAnswer:
    """The agent-facing answer: every refusal, timeouts included, is ``"deny"``."""
    if decision == "once":
        return "once"
    if decision == "session":
        return "session"
    if decision == "always":
        return "always"
    if decision not in _DECISIONS:
        raise ValueError(f"unknown approval decision {decision!r}")
    return "deny"
