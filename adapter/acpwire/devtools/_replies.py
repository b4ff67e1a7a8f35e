"""The scripted replies of the loopback model server and their OpenAI wire form.

:class:`Reply` is one scripted reply (the fields are listed in :mod:`.fake_llm`);
:func:`stream_events` and :func:`completion` turn it into the ``chat.completion.chunk``
objects of a streamed answer or the ``chat.completion`` object of a plain one;
:func:`load_script` reads a script file and :func:`last_user_text` finds the text a rule
matches against. Standard library only, like the server.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Reply", "completion", "last_user_text", "load_script", "stream_events"]

_REPLY_KEYS = frozenset(
    {
        "text",
        "reasoning",
        "tool_calls",
        "finish_reason",
        "usage",
        "status",
        "body",
        "raw",
        "chunks",
        "delay",
        "initial_delay",
        "match",
        "times",
    }
)


@dataclass
class Reply:
    """One scripted model reply (its fields: the docstring of :mod:`.fake_llm`)."""

    text: str = ""
    reasoning: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict[str, int] | None = None
    status: int = 200
    body: Any = None
    raw: str | None = None
    chunks: int = 3
    delay: float = 0.0
    initial_delay: float = 0.0
    match: str | None = None
    times: int | None = None

    @classmethod
    def coerce(cls, value: Reply | Mapping[str, Any]) -> Reply:
        if isinstance(value, Reply):
            return value
        unknown = set(value) - _REPLY_KEYS
        if unknown:
            raise ValueError(f"unknown reply keys: {sorted(unknown)}")
        return cls(**value)

    def calls(self) -> list[tuple[str, str, str]]:
        """(id, name, argument text) of each tool call."""
        result = []
        for index, call in enumerate(self.tool_calls):
            arguments = call.get("arguments", {})
            text = arguments if isinstance(arguments, str) else json.dumps(arguments)
            result.append((str(call.get("id", f"call_{index}")), str(call["name"]), text))
        return result

    def finish(self) -> str:
        return self.finish_reason or ("tool_calls" if self.tool_calls else "stop")


def _pieces(text: str, count: int) -> list[str]:
    if not text:
        return []
    size = max(1, -(-len(text) // max(1, count)))
    return [text[start : start + size] for start in range(0, len(text), size)]


def last_user_text(messages: Iterable[Mapping[str, Any]]) -> str:
    text = ""
    for message in messages:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, list):
            text = "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
        else:
            text = str(content or "")
    return text


def stream_events(reply: Reply, model: str, include_usage: bool) -> Iterator[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects of a streamed reply."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    yield chunk({"role": "assistant", "content": ""})
    for piece in _pieces(reply.reasoning, reply.chunks):
        yield chunk({"reasoning_content": piece})
    for piece in _pieces(reply.text, reply.chunks):
        yield chunk({"content": piece})
    for index, (call_id, name, arguments) in enumerate(reply.calls()):
        head = {"index": index, "id": call_id, "type": "function"}
        yield chunk({"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]})
        for piece in _pieces(arguments, reply.chunks):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    last = chunk({}, reply.finish())
    if reply.usage is not None and not include_usage:
        last["usage"] = _usage(reply.usage)
    yield last
    if reply.usage is not None and include_usage:
        yield {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "choices": [],
            "usage": _usage(reply.usage),
        }


def completion(reply: Reply, model: str) -> dict[str, Any]:
    """The ``chat.completion`` object of a non-streamed reply."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
            for call_id, name, args in reply.calls()
        ]
    result: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish()}],
    }
    if reply.usage is not None:
        result["usage"] = _usage(reply.usage)
    return result


def _usage(raw: Mapping[str, int]) -> dict[str, int]:
    prompt, answer = int(raw.get("prompt_tokens", 0)), int(raw.get("completion_tokens", 0))
    return {
        "prompt_tokens": prompt,
        "completion_tokens": answer,
        "total_tokens": prompt + answer,
    }


def load_script(path: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str | None]:
    """(replies, rules, model) from a script file."""
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    if isinstance(data, list):
        return data, [], None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a script is a list of replies or an object")
    return list(data.get("replies", [])), list(data.get("rules", [])), data.get("model")
