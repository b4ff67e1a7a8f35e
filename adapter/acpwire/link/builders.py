"""Typed ``session/update`` notifications for the hottest message, built in one pass.

``m.SessionNotification(session_id=..., update=m.SessionUpdateAgentMessageChunk(
content=m.ContentBlockText(text=...)))`` validates three models one after the other, and
each discriminated union looks its tag up on a model instance, which is slow. Handing
the same data to pydantic-core as one nested mapping builds the same validated models in
a single pass, about twice as fast. The result is an ordinary ``SessionNotification``
(equal to the nested construction; a test checks it), to send with
``ClientPeer.session_update`` like any other. For bytes without models at all, see
:mod:`acpwire.link.fastpath`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, Final, cast, get_args

from acp_v1 import models as m

from .fastpath import ChunkKind

_KINDS: Final = frozenset(get_args(ChunkKind))


@cache
def _validate() -> Callable[[Any], Any]:
    # Looked up on first use: reading the attribute builds the model's validator.
    return m.SessionNotification.__pydantic_validator__.validate_python


def text_chunk(
    session_id: str, text: str, kind: ChunkKind = "agent_message_chunk"
) -> m.SessionNotification:
    """A validated text chunk: an agent message (default), a thought or a user message.

    Raises ``ValueError`` for a ``kind`` that is not one of those three (the open
    ``SessionUpdate`` union would otherwise keep an unknown one as ``SessionUpdateOther``).
    """
    if kind not in _KINDS:
        raise ValueError(f"{kind!r} is not a text chunk kind ({', '.join(sorted(_KINDS))})")
    data = {
        "sessionId": session_id,
        "update": {"sessionUpdate": kind, "content": {"type": "text", "text": text}},
    }
    return cast("m.SessionNotification", _validate()(data))
