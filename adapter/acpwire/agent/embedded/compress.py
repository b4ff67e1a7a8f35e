"""Context-size estimates and the mechanics of compressing a chat history.

Compression keeps the most recent turns intact and replaces the older ones with one
summary exchange (a user message holding the summary plus a short assistant
acknowledgement, so that strictly alternating chat templates still accept it). The
summary text itself comes from the model; :func:`mechanical_summary` is the fallback.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Sequence

from acpwire.agent.cancel import CancelToken
from acpwire.agent.embedded.llm import ChatClient
from acpwire.agent.embedded.stream import ModelError
from acpwire.agent.seam import SUMMARY_KEY, Message, TurnUsage

log = logging.getLogger(__name__)

SUMMARY_PREFIX = "[Summary of the earlier conversation]"
SUMMARY_ACK = "Understood. I will continue from this summary."
ELIDED = "[tool output elided to save context]"
SUMMARY_INSTRUCTIONS = (
    "You compress coding-assistant conversations. Summarise the transcript you are given so"
    " the assistant can continue the work: the user's goals and requests, decisions made,"
    " files read or changed (with paths), commands run and their important results, open"
    " problems and next steps. Be factual and concise; use short bullet points."
)


def estimate_tokens(messages: Sequence[Message], extra_chars: int = 0) -> int:
    """A rough token count (about four characters per token)."""
    chars = extra_chars + sum(len(json.dumps(message, ensure_ascii=False)) for message in messages)
    return chars // 4


def cap_text(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n... [truncated: {len(text)} characters in total]"


def split_turns(messages: Sequence[Message]) -> list[list[Message]]:
    """Group messages into turns, each starting at a user message."""
    turns: list[list[Message]] = []
    for message in messages:
        if message.get("role") == "user" or not turns:
            turns.append([])
        turns[-1].append(message)
    return turns


def content_text(content: object) -> str:
    """The text of a message ``content`` (a string or a list of content parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                parts.append(str(part.get("text", "")))
            elif isinstance(part, dict):
                parts.append(f"[{part.get('type', 'attachment')}]")
        return "\n".join(parts)
    return ""


def render_transcript(messages: Sequence[Message], max_chars: int) -> str:
    """A plain-text transcript for the summariser, bounded to ``max_chars``."""
    lines: list[str] = []
    for message in messages:
        role = message.get("role")
        text = content_text(message.get("content"))
        if role == "tool":
            lines.append(f"Tool result: {cap_text(text, 2000)}")
            continue
        if text:
            lines.append(f"{str(role).capitalize()}: {text}")
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            lines.append(
                f"Tool call: {function.get('name')}({cap_text(str(function.get('arguments')), 500)})"
            )
    transcript = "\n".join(lines)
    if len(transcript) <= max_chars:
        return transcript
    half = max_chars // 2
    return f"{transcript[:half]}\n... [middle of the transcript omitted] ...\n{transcript[-half:]}"


def mechanical_summary(messages: Sequence[Message]) -> str:
    """A summary built without the model: user requests, tools used, last reply."""
    requests = [
        cap_text(content_text(message.get("content")), 300)
        for message in messages
        if message.get("role") == "user"
    ]
    tools = Counter(
        (call.get("function") or {}).get("name", "?")
        for message in messages
        for call in message.get("tool_calls") or []
    )
    replies = [
        content_text(message.get("content"))
        for message in messages
        if message.get("role") == "assistant" and content_text(message.get("content"))
    ]
    lines = ["User requests so far:", *(f"- {request}" for request in requests)]
    if tools:
        lines.append(
            "Tools used: " + ", ".join(f"{name} x{count}" for name, count in tools.items())
        )
    if replies:
        lines.append(f"Last assistant reply: {cap_text(replies[-1], 600)}")
    return "\n".join(lines)


def summary_exchange(summary: str) -> list[Message]:
    return [
        {"role": "user", "content": f"{SUMMARY_PREFIX}\n{summary}", SUMMARY_KEY: True},
        {"role": "assistant", "content": SUMMARY_ACK, SUMMARY_KEY: True},
    ]


def elide_tool_results(messages: list[Message], keep_last: int) -> int:
    """Blank out all but the last ``keep_last`` tool results in place; returns how many."""
    indexes = [index for index, message in enumerate(messages) if message.get("role") == "tool"]
    count = 0
    for index in indexes[: max(0, len(indexes) - keep_last)]:
        if messages[index].get("content") != ELIDED:
            messages[index] = {**messages[index], "content": ELIDED}
            count += 1
    return count


def summarise(
    client: ChatClient, model: str, older: Sequence[Message], *, max_chars: int, cancel: CancelToken
) -> tuple[str, TurnUsage]:
    """A summary of ``older`` from the model, or a mechanical one when the call fails.

    Raises :class:`~acpwire.agent.embedded.stream.ModelCancelled` when ``cancel`` fires.
    """
    request: list[Message] = [
        {"role": "system", "content": SUMMARY_INSTRUCTIONS},
        {"role": "user", "content": render_transcript(older, max_chars)},
    ]
    try:
        reply = client.chat(model=model, messages=request, cancel=cancel)
    except ModelError as exc:
        log.warning("model summary failed, using a mechanical one: %s", exc.message)
        return mechanical_summary(older), TurnUsage()
    return reply.text.strip() or mechanical_summary(older), reply.usage
