"""Queued prompts in the store: kept until their turn starts or they are known not to run."""

from __future__ import annotations

from typing import Any

from acpwire.store import NOT_RUN_CANCELLED, SessionStore
from tests.store.conftest import SessionFactory


def test_a_pending_prompt_becomes_the_user_message_when_its_turn_starts(
    store: SessionStore, new_session: SessionFactory
) -> None:
    new_session("s")
    first = store.add_pending_prompt("s", "later", "later")
    images: list[dict[str, Any]] = [
        {"type": "text", "text": "see"},
        {"type": "image_url", "image_url": {"url": "data:x"}},
    ]
    second = store.add_pending_prompt("s", images, "see [image]")
    assert [(p.id, p.content) for p in store.pending_prompts("s")] == [
        (first, "later"),
        (second, images),
    ]
    store.start_pending_prompt("s", first, {"role": "user", "content": "later"})
    assert [p.id for p in store.pending_prompts("s")] == [second]
    assert store.live_history("s") == [{"role": "user", "content": "later"}]


def test_settled_prompts_are_archived_with_a_note_and_only_those_chosen(
    store: SessionStore, new_session: SessionFactory
) -> None:
    new_session("s")
    store.append_messages("s", [{"role": "user", "content": "asked"}])
    kept = store.add_pending_prompt("s", "keep me", "keep me")
    dropped = store.add_pending_prompt("s", "drop me", "drop me")
    assert store.settle_pending_prompts("s", NOT_RUN_CANCELLED, [dropped]) == 1
    assert [p.id for p in store.pending_prompts("s")] == [kept]
    transcript = store.transcript("s")
    assert transcript[:2] == [
        {"role": "user", "content": "asked"},
        {"role": "user", "content": "drop me"},
    ]
    assert transcript[2]["role"] == "assistant" and "not run" in transcript[2]["content"]
    assert store.live_history("s") == [{"role": "user", "content": "asked"}]  # not for the model
    assert store.settle_pending_prompts("s", NOT_RUN_CANCELLED) == 1
    assert store.settle_pending_prompts("s", NOT_RUN_CANCELLED) == 0
    store.delete_session("s")  # the rows go with their session
    assert store.pending_prompts("s") == []
