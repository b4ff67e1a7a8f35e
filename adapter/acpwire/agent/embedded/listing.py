"""``GET {base_url}/models``: the models an OpenAI-compatible endpoint serves.

Start-up asks for this list (local discovery, the model left to the endpoint, the
context window the endpoint reports) in a thread while the backend comes up, so it runs
on the standard library: importing httpx there would cost about 40 ms of CPU that the
start-up competes for. An https endpoint is trusted as the chat client trusts it
(:func:`~.tls.tls_context`, built only for https: loading the CA bundle costs about
30 ms of CPU, which a local server's plain http:// look-up does not pay). Proxies come
from the environment (``HTTP_PROXY``, ``HTTPS_PROXY``, ``NO_PROXY``) as httpx takes
them. Every failure is a :class:`~.stream.ModelError` with a short message.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

from acpwire.agent.embedded.stream import ModelError, http_error
from acpwire.agent.embedded.tls import tls_context

__all__ = ["list_model_windows", "list_models"]

_MAX_BODY = 8 * 1024 * 1024
"""A model list larger than this is not one (OpenRouter's, the largest known, is ~2 MB)."""


def list_models(base_url: str, api_key: str | None, *, timeout: float = 5.0) -> list[str]:
    """Model ids from ``GET {base_url}/models``, in the server's order."""
    return [name for name, _ in list_model_windows(base_url, api_key, timeout=timeout)]


def list_model_windows(
    base_url: str, api_key: str | None, *, timeout: float = 5.0
) -> list[tuple[str, int | None]]:
    """``(id, context window)`` of each model ``GET {base_url}/models`` lists, in order.

    The window is what the entry reports as ``context_length`` (OpenRouter and others)
    or ``max_model_len`` (vLLM); None when it reports neither.
    """
    url = f"{base_url.rstrip('/')}/models"
    body = _get(url, base_url, api_key, timeout)
    try:
        data = json.loads(body).get("data")
    except (ValueError, AttributeError) as exc:
        raise ModelError(f"{url} did not return a JSON model list") from exc
    if not isinstance(data, list):
        raise ModelError(f"{url} did not return a model list (no 'data' array)")
    return [
        (entry["id"], _window(entry))
        for entry in data
        if isinstance(entry, dict) and isinstance(entry.get("id"), str)
    ]


def _get(url: str, base_url: str, api_key: str | None, timeout: float) -> bytes:
    headers = {"Accept": "application/json", "User-Agent": "acpwire"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(url, headers=headers)
    # The shared context only where TLS is spoken: building it loads the CA bundle
    # (~30 ms of CPU), which a local server's plain http:// look-up must not pay.
    handlers = (
        [urllib.request.HTTPSHandler(context=tls_context())] if url.startswith("https:") else []
    )
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(request, timeout=timeout) as response:
            return bytes(response.read(_MAX_BODY))
    except urllib.error.HTTPError as exc:
        raise _http_error(exc) from exc
    except TimeoutError as exc:
        raise ModelError(
            f"the model server at {base_url} timed out ({type(exc).__name__})"
        ) from exc
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError):
            raise ModelError(f"the model server at {base_url} timed out (ReadTimeout)") from exc
        raise ModelError(f"cannot reach the model server at {base_url}: {reason}") from exc
    except (OSError, ValueError) as exc:  # a reset connection, a malformed URL
        raise ModelError(
            f"model request to {base_url} failed: {type(exc).__name__}: {exc}"
        ) from exc


def _http_error(exc: urllib.error.HTTPError) -> ModelError:
    try:
        body = exc.read(64 * 1024).decode("utf-8", "replace")
    except OSError:
        body = ""
    return http_error(exc.code, body)


def _window(entry: Mapping[str, Any]) -> int | None:
    for key in ("context_length", "max_model_len"):
        value = entry.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None
