"""What an error answer of the editor to ``fs/*`` or ``terminal/create`` means.

The editor is trusted: when it answers a read, a write or a terminal with an error
("Permission denied", "Path is outside allowed cwd subtree"...), that answer is final and
the tool call fails; acpwire never does the same thing on the disk or in a local process
instead. Only a client that does not implement the method at all (``-32601``) gets the
local fallback. Every other failure is treated as a refusal too, conservatively: an
internal error (a client bug), a timeout or a closed connection says nothing about what
the user would allow.
"""

from __future__ import annotations

from acpwire.agent.seam import EditorRefused
from acpwire.rpc import METHOD_NOT_FOUND, RpcError

__all__ = ["DO_NOT_RETRY", "editor_refusal", "is_not_offered", "no_answer"]

DO_NOT_RETRY = (
    "It was not done any other way. Do not retry it with another tool or a shell command; "
    "tell the user if it is needed."
)


def is_not_offered(exc: BaseException) -> bool:
    """The client does not implement the method (``-32601``): the local fallback applies."""
    return isinstance(exc, RpcError) and exc.code == METHOD_NOT_FOUND


def editor_refusal(action: str, exc: BaseException) -> EditorRefused:
    """The final answer for the model when the editor answered ``action`` (``"write
    /x/y"``) with ``exc``, carrying the client's own words (acpx sends its reason as
    the ``data`` of a ``-32603``)."""
    return EditorRefused(f"The editor refused to {action}: {_detail(exc)}. {DO_NOT_RETRY}")


def _detail(exc: BaseException) -> str:
    if not isinstance(exc, RpcError):
        return str(exc) or type(exc).__name__
    parts = [exc.message]
    data = exc.data
    if isinstance(data, dict):
        data = data.get("details") or data.get("message") or data.get("reason")
    if isinstance(data, str) and data and data not in exc.message:
        parts.append(data[:500])
    return ": ".join(parts)


def no_answer(action: str) -> EditorRefused:
    """The editor did not answer in time (or the turn ended first)."""
    return EditorRefused(f"The editor did not answer the request to {action}. {DO_NOT_RETRY}")
