"""Turning OpenAI chat-completions stream chunks into one assembled model reply.

Pure data handling, no I/O: :class:`SSEDecoder` splits server-sent-event lines into
``data`` payloads and :class:`ReplyAssembler` folds ``chat.completion.chunk`` objects
(text, reasoning, tool-call fragments keyed by index, finish reason, usage) into a
:class:`ModelReply`. Servers differ in small ways (reasoning under ``reasoning`` or
``reasoning_content``, usage in the last chunk or a separate one, tool arguments as an
object instead of a string); those variants are accepted here.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from acpwire.agent.seam import TurnUsage

TextSink = Callable[[str], None]


class ModelError(Exception):
    """The model call failed: unreachable server, HTTP error status or a malformed reply."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class ModelCancelled(Exception):
    """The model call was interrupted through its cancel token."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call requested by the model; ``arguments`` is the raw JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(slots=True)
class ModelReply:
    """The assembled result of one chat-completions call."""

    text: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: TurnUsage = field(default_factory=TurnUsage)


class SSEDecoder:
    """Collects ``data:`` lines into event payloads; ``[DONE]`` marks the end."""

    def __init__(self) -> None:
        self._data: list[str] = []
        self.done = False

    def feed(self, line: str) -> str | None:
        """Feed one line (without its newline); returns a complete payload or None."""
        if line == "":
            return self._flush()
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if name == "data":
            self._data.append(value[1:] if value.startswith(" ") else value)
        return None

    def close(self) -> str | None:
        """Return a last payload that was not followed by a blank line."""
        return self._flush()

    def _flush(self) -> str | None:
        if not self._data:
            return None
        payload = "\n".join(self._data)
        self._data = []
        if payload.strip() == "[DONE]":
            self.done = True
            return None
        return payload


@dataclass(slots=True)
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ReplyAssembler:
    """Folds stream chunks into a :class:`ModelReply`, forwarding deltas as they come."""

    def __init__(
        self, on_text: TextSink | None = None, on_reasoning: TextSink | None = None
    ) -> None:
        self._on_text = on_text
        self._on_reasoning = on_reasoning
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[tuple[int, int], _PartialCall] = {}
        """(index, generation) -> the call being assembled; a new id at an index in use
        starts the next generation (Ollama sends parallel calls all at index 0)."""
        self._generation: dict[int, int] = {}
        self._finish: str | None = None
        self._usage: TurnUsage | None = None

    def feed_payload(self, payload: str) -> None:
        """Parse one SSE ``data`` payload and fold it in."""
        try:
            chunk = json.loads(payload)
        except json.JSONDecodeError as exc:
            raise ModelError(
                f"model server sent malformed JSON in the stream: {payload[:200]!r}"
            ) from exc
        if not isinstance(chunk, dict):
            raise ModelError(f"model server sent a non-object stream chunk: {payload[:200]!r}")
        self.feed_chunk(chunk)

    def feed_chunk(self, chunk: Mapping[str, Any]) -> None:
        error = chunk.get("error")
        if error is not None:
            raise ModelError(f"model server reported an error: {error_message(error)}")
        if isinstance(chunk.get("usage"), dict):
            self._usage = parse_usage(chunk["usage"])
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            return
        for choice in choices:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            if not isinstance(delta, dict):
                # A non-streaming body uses "message" instead of "delta".
                delta = choice.get("message")
            if isinstance(delta, dict):
                self._feed_delta(delta)
            if choice.get("finish_reason"):
                self._finish = str(choice["finish_reason"])

    def _feed_delta(self, delta: Mapping[str, Any]) -> None:
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            self._reasoning.append(reasoning)
            if self._on_reasoning is not None:
                self._on_reasoning(reasoning)
        content = delta.get("content")
        if isinstance(content, str) and content:
            self._text.append(content)
            if self._on_text is not None:
                self._on_text(content)
        tool_calls = delta.get("tool_calls")
        if isinstance(tool_calls, list):
            for position, fragment in enumerate(tool_calls):
                if isinstance(fragment, dict):
                    self._feed_call(position, fragment)

    def _feed_call(self, position: int, fragment: Mapping[str, Any]) -> None:
        raw_index = fragment.get("index", position)
        index = raw_index if isinstance(raw_index, int) else position
        call_id = fragment.get("id") if isinstance(fragment.get("id"), str) else None
        key = (index, self._generation.get(index, 0))
        current = self._calls.get(key)
        if current is not None and call_id and current.id and call_id != current.id:
            key = (index, key[1] + 1)  # another call at the same index
            self._generation[index] = key[1]
        slot = self._calls.setdefault(key, _PartialCall())
        if call_id:
            slot.id = call_id
        function = fragment.get("function")
        if not isinstance(function, dict):
            return
        name = function.get("name")
        # Some servers repeat the full name in every fragment; others send it once.
        if isinstance(name, str) and name and name != slot.name:
            slot.name += name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            slot.arguments.append(arguments)
        elif arguments is not None:
            slot.arguments.append(json.dumps(arguments))

    def result(self) -> ModelReply:
        calls = [
            ToolCall(
                id=slot.id or f"call_{uuid.uuid4().hex[:12]}",
                name=slot.name,
                arguments="".join(slot.arguments),
            )
            for _, slot in sorted(self._calls.items(), key=lambda item: (item[0][1], item[0][0]))
        ]
        return ModelReply(
            text="".join(self._text),
            reasoning="".join(self._reasoning),
            tool_calls=calls,
            finish_reason=self._finish,
            usage=self._usage or TurnUsage(),
        )


def parse_usage(raw: Mapping[str, Any]) -> TurnUsage:
    """Read OpenAI usage figures, tolerating missing or null fields."""

    def number(value: object) -> int:
        return value if isinstance(value, int) and value >= 0 else 0

    completion_details = raw.get("completion_tokens_details")
    prompt_details = raw.get("prompt_tokens_details")
    return TurnUsage(
        input_tokens=number(raw.get("prompt_tokens")),
        output_tokens=number(raw.get("completion_tokens")),
        reasoning_tokens=number(
            completion_details.get("reasoning_tokens")
            if isinstance(completion_details, dict)
            else None
        ),
        cached_read_tokens=number(
            prompt_details.get("cached_tokens") if isinstance(prompt_details, dict) else None
        ),
    )


def error_message(error: object) -> str:
    """The human message inside an OpenAI-style ``error`` value."""
    if isinstance(error, dict):
        message = error.get("message")
        if isinstance(message, str) and message:
            return message
        return json.dumps(error)[:300]
    return str(error)[:300]


def http_error(status: int, body: str) -> ModelError:
    """The error for an HTTP error answer of the model server: its status and the message
    its body carries (OpenAI's ``{"error": {...}}``, a bare ``{"message": ...}``, or the
    text itself), cut at 300 characters."""
    detail = body.strip()
    try:
        parsed = json.loads(detail) if detail else None
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and "error" in parsed:
        detail = error_message(parsed["error"])
    elif isinstance(parsed, dict) and isinstance(parsed.get("message"), str):
        detail = parsed["message"]
    suffix = f": {detail[:300]}" if detail else ""
    return ModelError(f"model server returned HTTP {status}{suffix}", status=status)
