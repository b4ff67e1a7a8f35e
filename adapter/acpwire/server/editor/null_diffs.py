"""A new file's diff goes out with ``"oldText": null``, not without the key.

The runtime encodes models with ``None`` fields left out, which the schema allows for
``Diff.oldText`` (optional, string or null) as for every other field; but Toad shows a
diff only when the key is there (null meaning "new file") and falls back to a bare
approval otherwise. The generated model serialises ``None`` as ``null`` when asked, so
the few messages that carry a new file's diff (``tool_call`` / ``tool_call_update``
updates and permission requests) are encoded here as JSON with the key put back; all
other messages keep the fast path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp_v1 import models as m
from acp_v1.peers import ClientPeer

__all__ = ["request_permission", "send_update"]


def _new_file(content: Sequence[Any] | None) -> bool:
    return any(isinstance(c, m.ToolCallContentDiff) and c.old_text is None for c in content or ())


def _with_nulls(document: dict[str, Any], holder: str) -> dict[str, Any]:
    for item in document.get(holder, {}).get("content") or ():
        if isinstance(item, dict) and item.get("type") == "diff":
            item.setdefault("oldText", None)
    return document


def _json(model: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


async def send_update(client: ClientPeer, notification: m.SessionNotification) -> None:
    """``session/update``, a new file's diff with ``"oldText": null``."""
    update = notification.update
    if not (
        isinstance(update, m.SessionUpdateToolCall | m.SessionUpdateToolCallUpdate)
        and _new_file(update.content)
    ):
        await client.session_update(notification)
        return
    await client.outbound.notify("session/update", _with_nulls(_json(notification), "update"))


async def request_permission(
    client: ClientPeer, request: m.RequestPermissionRequest
) -> m.RequestPermissionResponse:
    """``session/request_permission``, a new file's diff with ``"oldText": null``."""
    if not _new_file(request.tool_call.content):
        return await client.session_request_permission(request)
    raw = await client.outbound.request(
        "session/request_permission", _with_nulls(_json(request), "toolCall")
    )
    return m.RequestPermissionResponse.model_validate(raw)
