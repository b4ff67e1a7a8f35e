"""Pre-encoded forms of the hottest ACP message: a streamed text or thought chunk.

A prompt turn sends thousands of ``session/update`` text chunks. Building three
validated models and serializing them costs several microseconds each; these bytes are
identical to what the generated models encode (a test checks it over awkward text), at a
fraction of the cost. Everything else goes through the models.
"""

from __future__ import annotations

import json
from typing import Final, Literal, get_args

ChunkKind = Literal["agent_message_chunk", "agent_thought_chunk", "user_message_chunk"]

_KINDS: Final[dict[str, bytes]] = {
    kind: b'"},"sessionUpdate":"' + kind.encode() + b'"}}' for kind in get_args(ChunkKind)
}


def _string(value: str) -> bytes:
    # The same escaping as pydantic-core's JSON: only quote, backslash and control
    # characters; everything else as raw UTF-8.
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def text_chunk_params(session_id: str, text: str, kind: ChunkKind) -> bytes | None:
    """``SessionNotification`` params JSON of a text chunk, or None when the text cannot
    be encoded as UTF-8 (lone surrogates): the caller then uses the models."""
    try:
        return b"".join(
            (
                b'{"sessionId":',
                _string(session_id),
                b',"update":{"content":{"text":',
                _string(text),
                b',"type":"text',
                _KINDS[kind],
            )
        )
    except UnicodeEncodeError:
        return None
