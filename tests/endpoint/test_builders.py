"""``acpwire.builders.text_chunk`` builds exactly what the nested model constructors build."""

from __future__ import annotations

import pytest

from acp_v1 import models as m
from acpwire.builders import text_chunk
from acpwire.fastpath import text_chunk_params
from acpwire.rpc.messages import encode_notification, encode_notification_raw

KINDS = [
    ("agent_message_chunk", m.SessionUpdateAgentMessageChunk),
    ("agent_thought_chunk", m.SessionUpdateAgentThoughtChunk),
    ("user_message_chunk", m.SessionUpdateUserMessageChunk),
]
TEXTS = ["", "plain", 'quote " backslash \\ newline \n', "unicode ü 漢字 😀 \u2028", "x" * 5_000]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize(("kind", "cls"), KINDS)
def test_text_chunk_equals_the_nested_construction(text: str, kind: str, cls: type) -> None:
    nested = m.SessionNotification(
        session_id="sess_1", update=cls(content=m.ContentBlockText(text=text))
    )
    built = text_chunk("sess_1", text, kind)  # type: ignore[arg-type]
    assert built == nested
    assert type(built.update) is cls
    assert type(getattr(built.update, "content", None)) is m.ContentBlockText
    encoded = encode_notification("session/update", built)
    assert encoded == encode_notification("session/update", nested)
    fast = text_chunk_params("sess_1", text, kind)  # type: ignore[arg-type]
    assert fast is not None and encoded == encode_notification_raw("session/update", fast)


def test_the_default_kind_is_an_agent_message() -> None:
    assert text_chunk("s", "hi").update.session_update == "agent_message_chunk"


@pytest.mark.parametrize("kind", ["tool_call", "no_such_update", ""])
def test_a_kind_that_is_not_a_text_chunk_is_rejected(kind: str) -> None:
    with pytest.raises(ValueError, match="not a text chunk kind"):
        text_chunk("s", "hi", kind)  # type: ignore[arg-type]
