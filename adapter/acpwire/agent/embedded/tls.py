"""The one verifying TLS context every connection to the model server uses.

Built once per process on first use, with the trust httpx gives by default:
``SSL_CERT_FILE`` or else ``SSL_CERT_DIR`` when set, otherwise certifi's bundle (installed
with httpx). httpx would build a fresh context per client, loading the CA bundle each
time (about 20 ms of CPU per session). The chat client (:mod:`.llm`) and the model
listing (:mod:`.listing`) share it, so they trust the same servers.
"""

from __future__ import annotations

import os
import ssl
import threading

__all__ = ["tls_context"]

_LOCK = threading.Lock()
_CONTEXT: list[ssl.SSLContext] = []


def _build() -> ssl.SSLContext:
    cafile = os.environ.get("SSL_CERT_FILE")
    if cafile:
        return ssl.create_default_context(cafile=cafile)
    capath = os.environ.get("SSL_CERT_DIR")
    if capath:
        return ssl.create_default_context(capath=capath)
    try:
        import certifi
    except ImportError:  # the system's store, as the ssl module finds it
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())


def tls_context() -> ssl.SSLContext:
    """The process's verifying context (made on first use)."""
    with _LOCK:
        if not _CONTEXT:
            _CONTEXT.append(_build())
        return _CONTEXT[0]
