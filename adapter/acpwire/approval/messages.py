"""The tool-result texts the model reads when a command or an edit was not approved.

Each refusal says what happened (denied, timed out, cancelled, invalid answer), because the
model should react differently: a timeout is not a "no", and the user may still want it.
"""

from __future__ import annotations

from typing import Final, Literal

from acpwire.approval.permissions import ALLOWING, Decision

__all__ = ["Subject", "refusal_message", "remembered_deny_message"]

Subject = Literal["command", "edit", "read", "tool"]

_NOT_DONE: Final[dict[Subject, str]] = {
    "command": "the command was not run",
    "edit": "the file was not modified",
    "read": "nothing was read",
    "tool": "the tool was not called",
}
_THIS: Final[dict[Subject, str]] = {
    "command": "this command",
    "edit": "this edit",
    "read": "this read",
    "tool": "this tool call",
}


def _seconds(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:.1f}"


def refusal_message(decision: Decision, *, subject: Subject, timeout_s: float | None = None) -> str:
    """The tool result for a refused ``subject``; ``timeout_s`` is needed for ``"timeout"``.

    Raises ValueError for an allowing decision: there is nothing to refuse.
    """
    not_done = _NOT_DONE[subject]
    this = _THIS[subject]
    if decision in ALLOWING:
        raise ValueError(f"decision {decision!r} allows {this}; there is no refusal message")
    if decision == "deny":
        return f"BLOCKED: the user denied {this}; {not_done}."
    if decision == "deny_always":
        return (
            f"BLOCKED: the user denied {this} and chose to always deny it in this workspace; "
            f"{not_done}."
        )
    if decision == "timeout":
        if timeout_s is None or timeout_s < 0:
            raise ValueError("a timeout message needs the timeout in seconds")
        return (
            f"BLOCKED: approval timed out after {_seconds(timeout_s)} s with no answer from the "
            f"user; {not_done}. This is not a denial: you may explain why it is needed and "
            "try again."
        )
    if decision == "cancelled":
        return f"BLOCKED: the approval request for {this} was cancelled; {not_done}."
    if decision == "invalid":
        return (
            f"BLOCKED: the editor gave no valid answer to the approval request for {this}, "
            f"so it counts as denied; {not_done}."
        )
    raise ValueError(f"unknown approval decision {decision!r}")


def remembered_deny_message(subject: Subject) -> str:
    """The tool result when a remembered "always deny" refused without asking."""
    return (
        f"BLOCKED: {_THIS[subject]} is always denied in this workspace (a remembered "
        f"decision of the user); {_NOT_DONE[subject]}."
    )
