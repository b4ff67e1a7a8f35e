"""A scripted, OpenAI-compatible chat-completions server on 127.0.0.1 for tests and demos.

A real HTTP server (stdlib ``ThreadingHTTPServer`` in a thread) serving ``GET /v1/models``
and ``POST /v1/chat/completions`` (SSE streaming and plain JSON). Replies come from, in
order: the first matching *rule* (chosen by a substring of the last user message; used
when many sessions prompt at once), the *script* queue, else an echo
("You said: <last user text>"). Every chat request body is recorded.

Python use::

    with FakeLLM(script=[{"text": "hi"}]) as llm:
        llm.base_url   # http://127.0.0.1:PORT/v1
        llm.requests   # list of request bodies

Script use (stdlib only, so it runs as a plain process)::

    python -m acpwire.devtools.fake_llm --port 0 --script replies.json --ready-file url.txt

A reply is a mapping with any of: ``text``, ``reasoning``, ``tool_calls`` (list of
``{"id", "name", "arguments"}``; arguments may be an object or a raw, even malformed,
string), ``finish_reason``, ``usage`` (``{"prompt_tokens", "completion_tokens"}``),
``status`` plus ``body`` (an HTTP error), ``raw`` (a verbatim SSE body), ``chunks``
(number of pieces text and arguments are streamed in), ``delay`` (seconds before each
chunk) and ``initial_delay`` (seconds before the response headers). A rule adds
``match`` (substring) and optionally ``times`` (how often it may fire). A script file
holds a list of replies, or ``{"replies": [...], "rules": [...], "model": "..."}``.
This module is the HTTP server; the replies and their wire form are :mod:`._replies`.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from acpwire.devtools._replies import (
    Reply,
    completion,
    last_user_text,
    load_script,
    stream_events,
)

__all__ = ["FakeLLM", "Reply", "last_user_text", "load_script", "main"]

log = logging.getLogger(__name__)


class FakeLLM:
    """The server; use as a context manager or call :meth:`start` / :meth:`stop`."""

    def __init__(
        self,
        script: Iterable[Reply | Mapping[str, Any]] = (),
        *,
        rules: Iterable[Reply | Mapping[str, Any]] = (),
        model: str = "fake-model",
        models: Iterable[str] | None = None,
        port: int = 0,
        context_length: int | None = None,
        responder: Callable[[Mapping[str, Any]], Reply | Mapping[str, Any] | None] | None = None,
    ) -> None:
        self.model = model
        self.context_length = context_length
        """Reported as each listed model's ``context_length`` when set."""
        self.models = list(models) if models is not None else [model]
        self._script: deque[Reply] = deque(Reply.coerce(reply) for reply in script)
        self._rules: list[Reply] = [Reply.coerce(rule) for rule in rules]
        self._responder = responder
        self._requests: list[dict[str, Any]] = []
        self._cond = threading.Condition()
        self._closing = threading.Event()
        self.models_open = threading.Event()
        """Cleared, ``GET /models`` waits until it is set again (a slow model server)."""
        self.models_open.set()
        self.model_lists = 0
        """How many times ``GET /models`` was answered."""
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler_for(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._cond:
            return list(self._requests)

    def push(self, reply: Reply | Mapping[str, Any]) -> None:
        with self._cond:
            self._script.append(Reply.coerce(reply))

    def add_rule(self, rule: Reply | Mapping[str, Any]) -> None:
        with self._cond:
            self._rules.append(Reply.coerce(rule))

    def pending(self) -> int:
        """Scripted replies not served yet."""
        with self._cond:
            return len(self._script)

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: len(self._requests) >= count, timeout)

    def start(self) -> FakeLLM:
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="fake-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def serve_forever(self) -> None:
        """Serve in the calling thread until interrupted (the script entry point)."""
        try:
            self._server.serve_forever()
        finally:
            self._server.server_close()

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next_reply(self, body: Mapping[str, Any]) -> Reply:
        user_text = last_user_text(body.get("messages") or [])
        with self._cond:
            self._requests.append(dict(body))
            self._cond.notify_all()
        if self._responder is not None:
            chosen = self._responder(body)
            if chosen is not None:
                return Reply.coerce(chosen)
        with self._cond:
            for rule in self._rules:
                if rule.match is not None and rule.match in user_text and rule.times != 0:
                    if rule.times is not None:
                        rule.times -= 1
                    return rule
            if self._script:
                return self._script.popleft()
        return Reply(text=f"You said: {user_text}")

    def _sleep(self, seconds: float) -> bool:
        """Wait ``seconds`` unless the server is closing; False when closing."""
        return seconds <= 0 or not self._closing.wait(seconds)

    def stream_events(self, reply: Reply, include_usage: bool) -> Iterator[dict[str, Any]]:
        """The ``chat.completion.chunk`` objects of a streamed reply."""
        return stream_events(reply, self.model, include_usage)

    def completion(self, reply: Reply) -> dict[str, Any]:
        """The ``chat.completion`` object of a non-streamed reply."""
        return completion(reply, self.model)


def _handler_for(llm: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            log.debug("fake-llm: " + format, *args)

        def _send_json(self, status: int, payload: object) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                while not llm.models_open.wait(0.05) and not llm._closing.is_set():
                    pass
                data: list[dict[str, Any]] = [
                    {"id": name, "object": "model", "owned_by": "fake-llm"} for name in llm.models
                ]
                if llm.context_length is not None:
                    for entry in data:
                        entry["context_length"] = llm.context_length
                with llm._cond:
                    llm.model_lists += 1
                self._send_json(200, {"object": "list", "data": data})
            else:
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})
                return
            length = int(self.headers.get("Content-Length", "0"))
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                self._send_json(400, {"error": {"message": "request body is not JSON"}})
                return
            reply = llm._next_reply(body)
            if not llm._sleep(reply.initial_delay):
                return
            try:
                self._answer(body, reply)
            except (BrokenPipeError, ConnectionResetError):
                log.debug("fake-llm: client went away")

        def _answer(self, body: Mapping[str, Any], reply: Reply) -> None:
            if reply.status >= 400:
                error = (
                    reply.body
                    if reply.body is not None
                    else {
                        "error": {
                            "message": f"scripted HTTP {reply.status}",
                            "type": "server_error",
                        }
                    }
                )
                self._send_json(reply.status, error)
                return
            if not body.get("stream"):
                self._send_json(200, llm.completion(reply))
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            if reply.raw is not None:
                self.wfile.write(reply.raw.encode())
                return
            options = body.get("stream_options") or {}
            for event in llm.stream_events(reply, bool(options.get("include_usage"))):
                if not llm._sleep(reply.delay):
                    return
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    return Handler


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible test server")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", help="JSON file with replies (and rules)")
    parser.add_argument("--model", default=None)
    parser.add_argument("--ready-file", help="write the base URL here once listening")
    options = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    replies, rules, model = load_script(options.script) if options.script else ([], [], None)
    llm = FakeLLM(
        replies, rules=rules, model=options.model or model or "fake-model", port=options.port
    )
    if options.ready_file:
        # Written whole, then renamed, so a waiting process never reads half a URL.
        temporary = options.ready_file + ".tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(llm.base_url + "\n")
        os.replace(temporary, options.ready_file)
    log.info("fake LLM listening on %s", llm.base_url)
    try:
        llm.serve_forever()
    except KeyboardInterrupt:
        log.info("fake LLM stopped")


if __name__ == "__main__":
    main()
