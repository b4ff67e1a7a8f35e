"""The loopback model server of the end-to-end benchmarks, run as its own process.

It is the tests' scripted fake LLM (``tests/support/fake_llm.py``) plus the two things
Hermes needs that the tests do not: a context window in the model listing (Hermes refuses
models under 64,000 tokens and probes ``GET /v1/models`` and ``GET /v1/models/<id>``), and
a short fixed answer to non-streamed calls (Hermes generates a session title with one
after a turn; the scripted rules must only feed the measured, streamed turns). Tests set
that answer with ``aux_text`` (``"DENY"`` makes Hermes' smart approval refuse commands).

    python -m bench.model_server --script replies.json --ready-file url.txt
"""

from __future__ import annotations

import argparse
import json
import logging
import os
from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any, cast

from tests.support.fake_llm import FakeLLM, Reply, load_script

log = logging.getLogger(__name__)

CONTEXT_LENGTH = 131_072
AUX_REPLY = "Benchmark session"
LISTEN_BACKLOG = 128


class BenchModelServer(FakeLLM):
    """:class:`FakeLLM` that reports a context window and answers auxiliary calls briefly."""

    def __init__(
        self,
        script: Iterable[Reply | Mapping[str, Any]] = (),
        *,
        rules: Iterable[Reply | Mapping[str, Any]] = (),
        model: str = "bench-model",
        port: int = 0,
        aux_text: str = AUX_REPLY,
    ) -> None:
        super().__init__(script, rules=rules, model=model, port=port)
        self.aux_text = aux_text
        # socketserver listens with a backlog of 5; twenty sessions connecting at once
        # would overflow it and see resets or a 1 s SYN retry. Listening again resizes it.
        self._server.socket.listen(LISTEN_BACKLOG)
        self.aux_calls = 0
        base = cast("type[BaseHTTPRequestHandler]", self._server.RequestHandlerClass)
        self._server.RequestHandlerClass = _with_model_metadata(base, self)

    def _next_reply(self, body: Mapping[str, Any]) -> Reply:
        if not body.get("stream"):
            with self._cond:
                self.aux_calls += 1
            return Reply(text=self.aux_text, usage={"prompt_tokens": 10, "completion_tokens": 2})
        return super()._next_reply(body)


def _model_entry(name: str) -> dict[str, object]:
    return {
        "id": name,
        "object": "model",
        "owned_by": "bench",
        "context_length": CONTEXT_LENGTH,
        "max_model_len": CONTEXT_LENGTH,
    }


def _with_model_metadata(
    base: type[BaseHTTPRequestHandler], server: BenchModelServer
) -> type[BaseHTTPRequestHandler]:
    class Handler(base):  # type: ignore[valid-type,misc]  # a class object known only at run time
        def _json(self, status: int, payload: object) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            path = self.path.rstrip("/")
            if path in ("/v1/models", "/models"):
                data = [_model_entry(name) for name in server.models]
                self._json(200, {"object": "list", "data": data})
            elif path.startswith(("/v1/models/", "/models/")):
                name = path.rsplit("/", 1)[-1]
                if name in server.models:
                    self._json(200, _model_entry(name))
                else:
                    self._json(404, {"error": {"message": f"no model {name}"}})
            else:
                super().do_GET()

    return Handler


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", help="JSON file with replies and rules (fake_llm format)")
    parser.add_argument("--model", default=None)
    parser.add_argument("--ready-file", required=True, help="write the base URL here")
    options = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="model-server: %(message)s")
    replies, rules, model = load_script(options.script) if options.script else ([], [], None)
    server = BenchModelServer(
        replies, rules=rules, model=options.model or model or "bench-model", port=options.port
    )
    temporary = options.ready_file + ".tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(server.base_url + "\n")
    os.replace(temporary, options.ready_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        log.info("stopped")


if __name__ == "__main__":
    main()
