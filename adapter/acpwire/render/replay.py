"""A stored chat history replayed as ``session/update`` payloads (``session/load``).

Messages are in OpenAI chat shape. The replay keeps conversation order, uses the
provider's own tool-call ids, renders completions exactly like live ones, follows
``todo`` results with the plan they set, and closes every call that never got a
result as failed, so the client is never left with a call spinning forever.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeAlias

from acp_v1 import models as m
from acpwire.agent import seam
from acpwire.agent.seam import Message, ToolEnd, ToolStart
from acpwire.render.plan import plan_from_todo_result
from acpwire.render.text import coerce_args, text_of
from acpwire.render.tools import end_update, start_update

log = logging.getLogger(__name__)

SUMMARY_KEY: Final = seam.SUMMARY_KEY
"""A message with this key set to true holds the summary of compressed older turns."""
SUMMARY_NOTE: Final = "[Earlier conversation compressed]"
NO_RESULT: Final = "no result recorded"
IMAGE_NOTE: Final = "[image]"

# A string, so that importing this module does not import the models (loaded on first use).
ReplayUpdate: TypeAlias = (
    "m.SessionUpdateUserMessageChunk | m.SessionUpdateAgentMessageChunk"
    " | m.SessionUpdateAgentThoughtChunk | m.SessionUpdateToolCall"
    " | m.SessionUpdateToolCallUpdate | m.SessionUpdatePlan"
)

_IMAGE_PARTS = frozenset({"image_url", "image", "input_image"})

MessageMeta: TypeAlias = Callable[[Message, str], dict[str, Any] | None]
"""``_meta`` for the chunk replaying a message (given the message and its text), or None."""


def content_text(content: object) -> str:
    """The text of a message's ``content``: a string, or text parts joined by newlines.

    Image parts become ``[image]`` and other non-text parts ``[<type>]``, so the
    replay shows that something was there; blank parts are skipped.
    """
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if not isinstance(content, list):
        return text_of(content)
    texts: list[str] = []
    for part in content:
        text = _part_text(part)
        if text.strip():
            texts.append(text)
    return "\n".join(texts)


def _part_text(part: object) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, Mapping):
        return text_of(part)
    kind = part.get("type")
    for key in ("text", "content"):
        value = part.get(key)
        if isinstance(value, str) and kind in (None, "text", "input_text", "output_text"):
            return value
    if kind in _IMAGE_PARTS:
        return IMAGE_NOTE
    return f"[{kind}]" if isinstance(kind, str) and kind else ""


def _call_id(entry: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = entry.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return None


def _key(args: Mapping[str, Any]) -> str:
    """Arguments compared as canonical JSON."""
    return json.dumps(args, sort_keys=True, default=str)


class _Replay:
    def __init__(self, cwd: str, meta: MessageMeta | None = None) -> None:
        self.cwd = cwd
        self.meta = meta
        self.updates: list[ReplayUpdate] = []
        self.open: dict[str, ToolStart] = {}
        self.ended: dict[str, tuple[str, str, str | None]] = {}
        """Calls shown with their end: id -> (name, arguments, result). A later call with
        the same id *and* the same name and arguments is a compaction's copy of it (the
        transcript holds both) and is not shown again, nor is its result if unchanged; a
        reused id with other content is a call of its own."""
        self.copies: dict[str, ToolStart] = {}
        """Starts that repeat a shown call: shown after all if a different result follows
        (a model that reuses ids for the same command, run twice)."""

    def message(self, index: int, message: Message) -> None:
        role = message.get("role")
        if message.get(SUMMARY_KEY) and role == "assistant":
            return  # the acknowledgement of a summary: the note says it all
        if message.get(SUMMARY_KEY):
            summary = content_text(message.get("content")).strip()
            note = f"{SUMMARY_NOTE}\n{summary}" if summary else SUMMARY_NOTE
            self.updates.append(
                m.SessionUpdateAgentMessageChunk(content=m.ContentBlockText(text=note))
            )
        elif role == "user":
            text = content_text(message.get("content"))
            if text.strip():
                block = m.ContentBlockText(text=text)
                meta = self.meta(message, text) if self.meta else None
                self.updates.append(m.SessionUpdateUserMessageChunk(content=block, meta=meta))
        elif role == "assistant":
            self.assistant(index, message)
        elif role == "tool":
            self.tool_result(index, message)
        elif role != "system":
            log.debug("history message %d has role %r; not replayed", index, role)

    def assistant(self, index: int, message: Message) -> None:
        for key in ("reasoning_content", "reasoning"):
            thought = message.get(key)
            if isinstance(thought, str) and thought.strip():
                block = m.ContentBlockText(text=thought)
                self.updates.append(m.SessionUpdateAgentThoughtChunk(content=block))
                break
        text = content_text(message.get("content"))
        if text.strip():
            meta = self.meta(message, text) if self.meta else None
            self.updates.append(
                m.SessionUpdateAgentMessageChunk(content=m.ContentBlockText(text=text), meta=meta)
            )
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, Mapping):
                self.start(index, call)
            else:
                log.warning("history message %d: tool call %r is not an object", index, call)

    def start(self, index: int, call: Mapping[str, Any]) -> None:
        function = call.get("function")
        spec: Mapping[str, Any] = function if isinstance(function, Mapping) else call
        name = spec.get("name") if isinstance(spec.get("name"), str) else None
        call_id = _call_id(call, "id", "call_id", "tool_call_id")
        if call_id is None:
            log.warning("history message %d: tool call %s has no id; skipped", index, name)
            return
        args = coerce_args(spec.get("arguments"))
        shown = self.ended.get(call_id)
        if shown is not None and shown[:2] == (name or "tool", _key(args)):
            self.copies[call_id] = ToolStart(call_id=call_id, name=name or "tool", args=args)
            return
        if call_id in self.open:
            log.warning("history message %d: tool call id %s reused", index, call_id)
            self.close(self.open.pop(call_id))
        start = ToolStart(call_id=call_id, name=name or "tool", args=args)
        self.open[call_id] = start
        self.updates.append(start_update(start, cwd=self.cwd))

    def tool_result(self, index: int, message: Message) -> None:
        result = content_text(message.get("content"))
        call_id = _call_id(message, "tool_call_id", "call_id", "id") or f"replay-{index}"
        shown = self.ended.get(call_id)
        copy = self.copies.pop(call_id, None)
        if call_id not in self.open and shown is not None and shown[2] == result:
            return  # the same result again: a compaction's copy
        if copy is not None:  # the same call, another result: it did run again
            self.open[call_id] = copy
            self.updates.append(start_update(copy, cwd=self.cwd))
        start = self.open.pop(call_id, None)
        if start is None:
            # Show an orphan result under a start of its own rather than drop it.
            log.warning("history message %d: result for unknown tool call %s", index, call_id)
            name = message.get("name")
            start = ToolStart(
                call_id=call_id, name=name if isinstance(name, str) else "tool", args={}
            )
            self.updates.append(start_update(start, cwd=self.cwd))
        end = ToolEnd(call_id=call_id, name=start.name, args=start.args, result=result)
        self.ended[call_id] = (start.name, _key(start.args), result)
        update = end_update(end, cwd=self.cwd)
        self.updates.append(update)
        if start.name == "todo" and update.status == "completed":
            plan = plan_from_todo_result(result)
            if plan is not None:
                self.updates.append(plan)

    def close(self, start: ToolStart) -> None:
        self.ended[start.call_id] = (start.name, _key(start.args), None)
        end = ToolEnd(start.call_id, start.name, start.args, result=NO_RESULT, failed=True)
        self.updates.append(end_update(end, cwd=self.cwd))

    def finish(self) -> list[ReplayUpdate]:
        for start in self.open.values():
            self.close(start)
        self.open.clear()
        return self.updates


def replay_updates(
    history: Sequence[Message], *, cwd: str, meta: MessageMeta | None = None
) -> list[ReplayUpdate]:
    """The updates that show ``history`` in a client, in conversation order; ``meta``
    marks the user and agent message chunks (Hermes' compaction summaries)."""
    replay = _Replay(cwd, meta)
    for index, message in enumerate(history):
        if isinstance(message, dict):
            replay.message(index, message)
        else:
            log.warning("history entry %d is not a message object; not replayed", index)
    return replay.finish()
