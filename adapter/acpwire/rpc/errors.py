"""JSON-RPC error objects and the one mapping from Python exceptions to them.

Everything a peer sees when something fails goes through :func:`error_from_exception`:
an :class:`RpcError` passes through unchanged, a pydantic ``ValidationError`` becomes a
short ``-32602`` message, and anything else becomes a bare ``-32603 "Internal error"``
whose traceback goes to the log (stderr), never onto the wire.

This module knows nothing about ACP; it imports only the stdlib and pydantic.
"""

from __future__ import annotations

import logging
from typing import Final

from pydantic import ValidationError

logger = logging.getLogger(__name__)

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
REQUEST_CANCELLED: Final = -32800
AUTH_REQUIRED: Final = -32000
RESOURCE_NOT_FOUND: Final = -32002

_MAX_REPORTED_ERRORS: Final = 3
_MAX_PART_CHARS: Final = 160


class RpcError(Exception):
    """A JSON-RPC error: raised by handlers, sent as an error response, raised by ``request``."""

    def __init__(self, code: int, message: str, data: object | None = None) -> None:
        super().__init__(code, message, data)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        return f"{self.message} ({self.code})"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r}, data={self.data!r})"

    def to_json(self) -> dict[str, object]:
        """The JSON-RPC ``error`` member; ``data`` only when there is some."""
        error: dict[str, object] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def from_json(cls, error: object) -> RpcError:
        """Build an error from a peer's ``error`` member, tolerating a malformed one.

        A malformed member still yields an error (so a waiting request fails instead of
        hanging), described as such.
        """
        if isinstance(error, dict):
            code = error.get("code")
            message = error.get("message")
            if isinstance(code, int) and not isinstance(code, bool) and isinstance(message, str):
                return cls(code, message, error.get("data"))
        return cls(INTERNAL_ERROR, f"Malformed error object from peer: {_clip(repr(error))}")


class ConnectionClosedError(RpcError):
    """The connection ended before an answer could arrive or a message could be sent."""

    def __init__(self, detail: str = "Connection closed") -> None:
        super().__init__(INTERNAL_ERROR, detail)


def parse_error(detail: str) -> RpcError:
    return RpcError(PARSE_ERROR, f"Parse error: {detail}")


def invalid_request(detail: str) -> RpcError:
    return RpcError(INVALID_REQUEST, f"Invalid request: {detail}")


def method_not_found(method: str, reason: str | None = None) -> RpcError:
    """-32601 for ``method``; ``reason`` (why a method that exists is not served) goes
    into the log and the error's ``data``."""
    data: dict[str, object] = {"method": method}
    if reason is not None:
        data["reason"] = reason
    return RpcError(METHOD_NOT_FOUND, f"Method not found: {method}", data)


def invalid_params(message: str, data: object | None = None) -> RpcError:
    return RpcError(INVALID_PARAMS, message, data)


def internal_error(message: str = "Internal error") -> RpcError:
    return RpcError(INTERNAL_ERROR, message)


def request_cancelled() -> RpcError:
    return RpcError(REQUEST_CANCELLED, "Request cancelled")


def auth_required(message: str = "Authentication required") -> RpcError:
    return RpcError(AUTH_REQUIRED, message)


def resource_not_found(what: str) -> RpcError:
    return RpcError(RESOURCE_NOT_FOUND, f"Resource not found: {what}")


def describe_validation_error(exc: ValidationError) -> str:
    """A one-line summary of at most the first three errors: ``loc.path: msg; ...``."""
    errors = exc.errors(include_url=False, include_context=False, include_input=False)
    parts = []
    for err in errors[:_MAX_REPORTED_ERRORS]:
        loc = ".".join(str(part) for part in err["loc"])
        text = f"{loc}: {err['msg']}" if loc else err["msg"]
        parts.append(_clip(text))
    summary = "; ".join(parts) or "validation failed"
    hidden = len(errors) - _MAX_REPORTED_ERRORS
    if hidden > 0:
        summary += f" (and {hidden} more)"
    return f"Invalid params: {summary}"


def error_from_exception(exc: BaseException, *, context: str = "handler") -> RpcError:
    """Map any exception to the error a peer should see.

    Unexpected exceptions are logged here at ERROR with their traceback (``context``
    names what failed, e.g. the method), so no caller can forget to.
    """
    if isinstance(exc, RpcError):
        return exc
    if isinstance(exc, ValidationError):
        return invalid_params(describe_validation_error(exc))
    logger.error("%s failed with an unexpected exception", context, exc_info=exc)
    return internal_error()


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_PART_CHARS else text[: _MAX_PART_CHARS - 3] + "..."
