"""The application-facing contract of a connection, and how handler failures are reported.

A connection hands each request and notification to an :class:`RpcHandler`. Whatever a
request handler raises becomes an error answer through ``error_from_exception``; this
module decides how loudly each kind of failure is logged: unknown benign probes
(``ping``...) at DEBUG, other unknown methods at INFO, bad params at WARNING, all without
a traceback; unexpected exceptions at ERROR with one. Notification failures are never
answered, but never swallowed silently either.

Methods are plain strings and params are opaque: nothing here knows ACP.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from pydantic import ValidationError

from .errors import (
    METHOD_NOT_FOUND,
    REQUEST_CANCELLED,
    RpcError,
    error_from_exception,
    log_unexpected,
)
from .messages import RequestId

logger = logging.getLogger(__name__)


class Peer(Protocol):
    """The connection a request arrived on, as its handler may use it (a
    :class:`~acpwire.rpc.connection.Connection`, which implements this contract)."""

    async def request(
        self, method: str, params: object = None, *, timeout: float | None = None
    ) -> object: ...

    async def notify(self, method: str, params: object = None) -> None: ...

    async def notify_encoded(self, method: str, params_json: bytes) -> None: ...

    async def drained(self) -> None: ...


@dataclass(frozen=True, slots=True)
class RequestContext:
    """What a request handler knows about the request it serves."""

    id: RequestId
    method: str
    connection: Peer
    after_answer: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    """Callbacks run, in order, right after a successful answer is written (for
    notifications that a client must only see once it has the answer)."""


class RpcHandler(Protocol):
    """The application side of a connection; raise :class:`RpcError` to answer an error."""

    async def on_request(self, method: str, params: object, ctx: RequestContext) -> object: ...

    async def on_notification(self, method: str, params: object) -> None: ...


def request_failure(
    name: str, method: str, exc: Exception, benign: frozenset[str], *, messages: bool | None = None
) -> RpcError:
    """The error to answer for a failed request handler, logged at the fitting level;
    ``messages``: whether an unexpected exception's message goes into the answer."""
    error = error_from_exception(exc, context=f"{name}: request {method}", messages=messages)
    if isinstance(exc, ValidationError):
        logger.warning("%s: %s: %s", name, method, error.message)
    elif isinstance(exc, RpcError):
        if error.code == METHOD_NOT_FOUND:
            level = logging.DEBUG if method in benign else logging.INFO
            reason = error.data.get("reason") if isinstance(error.data, dict) else None
            logger.log(level, "%s: %s %r", name, reason or "unknown method", method)
        elif error.code == REQUEST_CANCELLED:
            logger.debug("%s: request %s cancelled by its handler", name, method)
        else:
            logger.info("%s: request %s failed: %s", name, method, error)
    return error


def report_notification_failure(
    name: str, method: str, exc: Exception, benign: frozenset[str]
) -> None:
    """Log a failed notification handler (notifications are never answered)."""
    if isinstance(exc, RpcError):
        # Unknown notifications SHOULD be ignored, $/ ones MAY be: no alarm for those.
        quiet = exc.code == METHOD_NOT_FOUND and (method.startswith("$/") or method in benign)
        level = logging.DEBUG if quiet else logging.WARNING
        logger.log(level, "%s: notification %s failed: %s", name, method, exc)
    elif isinstance(exc, ValidationError):
        message = error_from_exception(exc).message
        logger.warning("%s: notification %s: %s", name, method, message)
    else:
        log_unexpected(f"{name}: notification {method}", exc)


def cancel_target(params: object) -> tuple[RequestId] | None:
    """The ``requestId`` of a ``$/cancel_request`` (boxed, as it may be null), if valid."""
    if isinstance(params, dict):
        value = params.get("requestId", ...)
    else:  # a typed decoder may hand over a model
        value = getattr(params, "request_id", ...)
    if value is None or isinstance(value, str):
        return (value,)
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    return None


def preview(line: bytes, limit: int = 200) -> str:
    """A log-safe excerpt of a raw line."""
    text = repr(line[:limit])
    return text if len(line) <= limit else f"{text}... ({len(line)} bytes)"
