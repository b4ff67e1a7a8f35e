"""``GET /models`` on the standard library: lists, errors, timeouts, proxies, and no httpx."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from acpwire.agent.embedded.listing import list_model_windows, list_models
from acpwire.agent.embedded.stream import ModelError
from tests.support.fake_llm import FakeLLM


class _Recorder:
    """A loopback server answering every GET with one canned response, recording requests."""

    def __init__(self, status: int, body: bytes) -> None:
        self.status, self.body = status, body
        self.paths: list[str] = []
        self.auth: list[str | None] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                recorder.paths.append(self.path)
                recorder.auth.append(self.headers.get("Authorization"))
                self.send_response(recorder.status)
                self.send_header("Content-Length", str(len(recorder.body)))
                self.end_headers()
                self.wfile.write(recorder.body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> _Recorder:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    yield


def _models(*entries: dict[str, Any]) -> bytes:
    return json.dumps({"object": "list", "data": list(entries)}).encode()


def test_ids_and_context_windows_in_the_servers_order(no_proxy_env: None) -> None:
    with FakeLLM(models=["zeta", "alpha"], context_length=131_072) as llm:
        assert list_model_windows(llm.base_url, "sk-x") == [("zeta", 131_072), ("alpha", 131_072)]
        assert list_models(llm.base_url + "/", None) == ["zeta", "alpha"]


def test_vllm_window_key_bearer_key_and_entries_without_an_id(no_proxy_env: None) -> None:
    body = _models({"id": "a", "max_model_len": 8192}, {"object": "model"}, {"id": "b"})
    with _Recorder(200, body) as server:
        assert list_model_windows(server.url + "/v1", "sk-secret") == [("a", 8192), ("b", None)]
        assert list_models(server.url + "/v1", None) == ["a", "b"]
    assert server.paths == ["/v1/models", "/v1/models"]
    assert server.auth == ["Bearer sk-secret", None]


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (401, b'{"error": {"message": "invalid api key"}}', "HTTP 401: invalid api key"),
        (503, b'{"message": "loading model"}', "HTTP 503: loading model"),
        (500, b"", "model server returned HTTP 500"),
        (200, b"<html>not json</html>", "did not return a JSON model list"),
        (200, b'{"models": []}', "no 'data' array"),
    ],
)
def test_bad_answers_are_one_clear_model_error(
    no_proxy_env: None, status: int, body: bytes, message: str
) -> None:
    with _Recorder(status, body) as server, pytest.raises(ModelError) as caught:
        list_models(server.url, "k")
    assert message in caught.value.message
    if status >= 400:
        assert caught.value.status == status


def test_a_server_that_never_answers_times_out(no_proxy_env: None) -> None:
    with FakeLLM() as llm:
        llm.models_open.clear()
        with pytest.raises(ModelError, match="timed out"):
            list_models(llm.base_url, None, timeout=0.3)
        llm.models_open.set()


def test_nothing_listening_is_cannot_reach(no_proxy_env: None) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ModelError, match="cannot reach the model server"):
        list_models(f"http://127.0.0.1:{port}/v1", None, timeout=2)


def test_the_environments_proxy_is_used_and_no_proxy_bypasses_it(
    no_proxy_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLLM(models=["direct"]) as llm, _Recorder(200, _models({"id": "proxied"})) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        assert list_models(llm.base_url, None) == ["proxied"]
        assert proxy.paths == [f"{llm.base_url}/models"]  # the absolute form a proxy gets
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        assert list_models(llm.base_url, None) == ["direct"]
        assert len(proxy.paths) == 1


def test_listing_does_not_load_the_http_client() -> None:
    """The look-up runs while the backend starts: it must not pull httpx in."""
    code = (
        "import sys, acpwire.agent.embedded.listing, acpwire.agent.config;"
        " print(sorted(m for m in ('httpx', 'httpcore') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"


def _fresh_listing(url: str) -> str:
    """List ``url`` in a fresh interpreter; what it printed: whether the shared TLS
    context was built, and whether the CA bundle's package was loaded."""
    code = (
        "import sys; from acpwire.agent.embedded import listing, tls\n"
        "try:\n"
        f"    listing.list_models({url!r}, None, timeout=2)\n"
        "except listing.ModelError:\n"
        "    pass\n"
        "print(len(tls._CONTEXT), 'certifi' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.strip()


def test_a_plain_http_endpoint_is_listed_without_building_the_tls_context(
    no_proxy_env: None,
) -> None:
    """Loading the CA bundle costs ~30 ms of CPU at start-up; http:// needs none of it."""
    with FakeLLM() as llm:
        assert _fresh_listing(llm.base_url) == "0 False"


def test_an_https_endpoint_is_asked_with_the_shared_tls_context(no_proxy_env: None) -> None:
    with socket.socket() as sock:  # a port nothing listens on: the context is made first
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    assert _fresh_listing(f"https://127.0.0.1:{port}/v1").startswith("1 ")
