"""A small synchronous OpenAI chat-completions client (streaming) on httpx.

The HTTP exchange runs in a helper thread that feeds lines into a queue; the calling
thread parses them. That split makes :meth:`ChatClient.chat` interruptible at any
moment (even before the server sends its headers): cancelling the token wakes the
caller at once and shuts the socket down so the helper thread and the server stop too.
Every failure becomes a :class:`ModelError` with a short message.
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import re
import socket
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from acpwire.agent.cancel import CancelToken
from acpwire.agent.embedded.stream import (
    ModelCancelled,
    ModelError,
    ModelReply,
    ReplyAssembler,
    SSEDecoder,
    TextSink,
    http_error,
)
from acpwire.agent.embedded.tls import tls_context
from acpwire.agent.seam import Message

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _Line:
    text: str


@dataclass(frozen=True, slots=True)
class _Body:
    text: str


@dataclass(frozen=True, slots=True)
class _Failed:
    error: ModelError


class _Signal:
    def __init__(self, name: str) -> None:
        self.name = name


_END = _Signal("end")
_CANCELLED = _Signal("cancelled")
_Item = _Line | _Body | _Failed | _Signal


class _ResponseHolder:
    """Lets another thread abort the in-flight response by shutting its socket down."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._response: httpx.Response | None = None
        self._aborted = False

    def attach(self, response: httpx.Response) -> bool:
        with self._lock:
            self._response = response
            aborted = self._aborted
        if aborted:
            _shutdown(response)
        return not aborted

    def abort(self) -> None:
        with self._lock:
            self._aborted = True
            response = self._response
        if response is not None:
            _shutdown(response)


def _shutdown(response: httpx.Response) -> None:
    # Closing a socket does not wake a thread blocked in recv(); shutdown() does.
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


class ChatClient:
    """Calls ``POST {base_url}/chat/completions`` with ``stream: true``."""

    def __init__(self, base_url: str, api_key: str | None, *, timeout: float = 600.0) -> None:
        self.base_url = base_url.rstrip("/")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=min(10.0, timeout)),
            verify=tls_context(),
        )

    def chat(
        self,
        *,
        model: str,
        messages: Sequence[Message],
        cancel: CancelToken,
        tools: Sequence[Mapping[str, Any]] = (),
        temperature: float | None = None,
        reasoning_effort: str | None = None,
        on_text: TextSink | None = None,
        on_reasoning: TextSink | None = None,
    ) -> ModelReply:
        """Run one completion; raises :class:`ModelError` or :class:`ModelCancelled`."""
        if cancel.cancelled:
            raise ModelCancelled()
        body: dict[str, Any] = {
            "model": model,
            "messages": list(messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            body["tools"] = list(tools)
        if temperature is not None:
            body["temperature"] = temperature
        if reasoning_effort is not None:
            body["reasoning_effort"] = reasoning_effort
        items: queue.Queue[_Item] = queue.Queue()
        holder = _ResponseHolder()
        unregister_wake = cancel.on_cancel(lambda: items.put(_CANCELLED))
        unregister_abort = cancel.on_cancel(holder.abort)
        threading.Thread(
            target=self._pump, args=(body, items, holder, cancel), name="acpwire-llm", daemon=True
        ).start()
        finished = False
        try:
            reply = _consume(items, ReplyAssembler(on_text, on_reasoning))
            finished = True
            return reply
        finally:
            unregister_wake()
            unregister_abort()
            if not finished:
                holder.abort()

    def _pump(
        self,
        body: dict[str, Any],
        items: queue.Queue[_Item],
        holder: _ResponseHolder,
        cancel: CancelToken,
    ) -> None:
        url = f"{self.base_url}/chat/completions"
        try:
            with self._http.stream(
                "POST",
                url,
                content=_request_json(body),
                headers={"Accept": "text/event-stream", "Content-Type": "application/json"},
            ) as response:
                if not holder.attach(response):
                    return
                if response.status_code >= 400:
                    response.read()
                    items.put(_Failed(_http_error(response)))
                    return
                if "application/json" in response.headers.get("content-type", ""):
                    # A server that ignores "stream" answers with one JSON object.
                    response.read()
                    items.put(_Body(response.text))
                else:
                    for line in sse_lines(response.iter_text()):
                        items.put(_Line(line))
                items.put(_END)
        except Exception as exc:
            if cancel.cancelled:
                log.debug("model stream stopped after cancel: %r", exc)
                return
            items.put(_Failed(_transport_error(exc, self.base_url)))

    def close(self) -> None:
        self._http.close()


def _consume(items: queue.Queue[_Item], assembler: ReplyAssembler) -> ModelReply:
    decoder = SSEDecoder()
    while True:
        item = items.get()
        if item is _CANCELLED:
            raise ModelCancelled()
        if isinstance(item, _Failed):
            raise item.error
        if isinstance(item, _Body):
            assembler.feed_payload(item.text)
            return assembler.result()
        if item is _END:
            payload = decoder.close()
            if payload is not None:
                assembler.feed_payload(payload)
            reply = assembler.result()
            if not decoder.done and reply.finish_reason is None:
                raise ModelError("the model stream ended before the reply was complete")
            return reply
        if isinstance(item, _Line):
            payload = decoder.feed(item.text)
            if payload is not None:
                assembler.feed_payload(payload)
            if decoder.done:
                return assembler.result()


def _http_error(response: httpx.Response) -> ModelError:
    return http_error(response.status_code, response.text)


def _transport_error(exc: Exception, base_url: str) -> ModelError:
    if isinstance(exc, httpx.ConnectError):
        return ModelError(f"cannot reach the model server at {base_url}: {exc}")
    if isinstance(exc, httpx.TimeoutException):
        return ModelError(f"the model server at {base_url} timed out ({type(exc).__name__})")
    if isinstance(exc, httpx.HTTPError):
        return ModelError(f"model request to {base_url} failed: {exc}")
    return ModelError(f"model request to {base_url} failed: {type(exc).__name__}: {exc}")


def _request_json(body: Mapping[str, Any]) -> bytes:
    """The request body as UTF-8 JSON; a lone UTF-16 surrogate in the conversation (half
    an emoji) goes out escaped instead of failing the request."""
    try:
        return json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(body, ensure_ascii=True).encode("ascii")


_EOL = re.compile(r"\r\n|\r|\n")


def sse_lines(chunks: Iterable[str]) -> Iterator[str]:
    """The lines of an event stream: ended by CRLF, CR or LF only (``str.splitlines``, which
    httpx's ``iter_lines`` uses, also breaks at U+2028, U+0085... that JSON carries raw)."""
    pending = ""
    for chunk in chunks:
        pending += chunk
        start = 0
        for end in _EOL.finditer(pending):
            if end.group() == "\r" and end.end() == len(pending):
                break  # maybe the first half of a CRLF split across chunks
            yield pending[start : end.start()]
            start = end.end()
        pending = pending[start:]
    if pending:
        yield pending.rstrip("\r")
