"""A text chunk three ways: nested generated models, ``acpwire.link.builders.text_chunk`` (one
validation pass) and ``acpwire.link.fastpath`` bytes; all give the same model and bytes."""

from __future__ import annotations

import json

import pytest

from acp_v1 import models as m
from acpwire.link.builders import text_chunk
from acpwire.link.fastpath import text_chunk_params
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
def test_three_ways_give_the_same_model_and_bytes(text: str, kind: str, cls: type) -> None:
    model = m.SessionNotification(
        session_id='sess "1"', update=cls(content=m.ContentBlockText(text=text))
    )
    encoded = encode_notification("session/update", model)
    fast = text_chunk_params('sess "1"', text, kind)  # type: ignore[arg-type]
    assert fast is not None
    assert encode_notification_raw("session/update", fast) == encoded
    assert json.loads(fast)["update"]["content"]["text"] == text
    built = text_chunk('sess "1"', text, kind)  # type: ignore[arg-type]
    assert built == model
    assert type(built.update) is cls
    assert type(getattr(built.update, "content", None)) is m.ContentBlockText
    assert encode_notification("session/update", built) == encoded


def test_unencodable_text_falls_back_to_the_models() -> None:
    assert text_chunk_params("s", "lone \ud800 surrogate", "agent_message_chunk") is None


def test_raw_params_must_be_one_object_without_newlines() -> None:
    with pytest.raises(ValueError):
        encode_notification_raw("x", b'{"a":\n1}')
    with pytest.raises(ValueError):
        encode_notification_raw("x", b"[1]")


def test_the_builder_defaults_to_an_agent_message() -> None:
    assert text_chunk("s", "hi").update.session_update == "agent_message_chunk"


@pytest.mark.parametrize("kind", ["tool_call", "no_such_update", ""])
def test_the_builder_rejects_a_kind_that_is_not_a_text_chunk(kind: str) -> None:
    with pytest.raises(ValueError, match="not a text chunk kind"):
        text_chunk("s", "hi", kind)  # type: ignore[arg-type]
