"""The pre-encoded text chunk is byte for byte what the generated models encode."""

from __future__ import annotations

import json

import pytest

from acp_v1 import models as m
from acpwire.fastpath import text_chunk_params
from acpwire.rpc.messages import encode_notification, encode_notification_raw

TEXTS = [
    "",
    "plain",
    'quote " and backslash \\',
    "newline\n tab\t cr\r formfeed\f backspace\b",
    "controls \x00 \x01 \x1f and DEL \x7f",
    "unicode ü 漢字 😀 \u2028 \u2029",
    "</script> & <tag>",
    "x" * 10_000,
]
KINDS = [
    ("agent_message_chunk", m.SessionUpdateAgentMessageChunk),
    ("agent_thought_chunk", m.SessionUpdateAgentThoughtChunk),
    ("user_message_chunk", m.SessionUpdateUserMessageChunk),
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize(("kind", "cls"), KINDS)
def test_text_chunk_bytes_equal_the_models_encoding(text: str, kind: str, cls: type) -> None:
    model = m.SessionNotification(
        session_id='sess "1"', update=cls(content=m.ContentBlockText(text=text))
    )
    fast = text_chunk_params('sess "1"', text, kind)  # type: ignore[arg-type]
    assert fast is not None
    assert encode_notification_raw("session/update", fast) == encode_notification(
        "session/update", model
    )
    assert json.loads(fast)["update"]["content"]["text"] == text


def test_unencodable_text_falls_back_to_the_models() -> None:
    assert text_chunk_params("s", "lone \ud800 surrogate", "agent_message_chunk") is None


def test_raw_params_must_be_one_object_without_newlines() -> None:
    with pytest.raises(ValueError):
        encode_notification_raw("x", b'{"a":\n1}')
    with pytest.raises(ValueError):
        encode_notification_raw("x", b"[1]")
