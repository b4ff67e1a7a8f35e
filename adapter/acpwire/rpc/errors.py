"""JSON-RPC error objects and the one mapping from Python exceptions to them.

Everything a peer sees when something fails goes through :func:`error_from_exception`:
an :class:`RpcError` passes through unchanged, a pydantic ``ValidationError`` becomes a
short ``-32602`` message, and anything else becomes ``-32603`` naming the exception:
message ``Internal error: KeyError: 'x'``, data ``{"exception": "KeyError", "message":
"'x'"}``. Exception groups (an anyio task group's) are unwrapped to the exception that
started them, and so is a :class:`HandlerBug`; its message is masked of secrets
(:func:`mask_secrets`) and left out when ``ACPWIRE_ERROR_MESSAGES=0`` (or the
connection's ``error_messages=False``). The traceback goes to the log (stderr), once,
from the first frame of the code that raised (the runtime's frames above it cut off),
never onto the wire.

This module knows nothing about ACP; it imports only the stdlib, pydantic and the rule
of which names look like credentials.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Final, TypeVar

from pydantic import ValidationError

from acpwire.config.secret_names import looks_secret

logger = logging.getLogger(__name__)

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
REQUEST_CANCELLED: Final = -32800
AUTH_REQUIRED: Final = -32000
RESOURCE_NOT_FOUND: Final = -32002

E = TypeVar("E", bound=BaseException)

_MAX_REPORTED_ERRORS: Final = 3
_MAX_PART_CHARS: Final = 160
_MAX_MESSAGE_CHARS: Final = 500

ERROR_MESSAGES_ENV: Final = "ACPWIRE_ERROR_MESSAGES"
"""Set to ``0`` (``false``, ``no``, ``off``) to leave exception messages out of error
answers: the peer then sees only the exception's type."""
_OFF: Final = frozenset({"0", "false", "no", "off"})


def error_messages_default(env: Mapping[str, str] | None = None) -> bool:
    """Whether error answers carry exception messages: :data:`ERROR_MESSAGES_ENV`."""
    value = (os.environ if env is None else env).get(ERROR_MESSAGES_ENV, "")
    return value.strip().lower() not in _OFF


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


MISTAKE_MARK: Final = "__acpwire_mistake__"
"""Set (true) on an exception that states a mistake of the user's code in full (a wrong
return value, found by acpwire's checks): logged as its one line, without the runtime's
traceback that found it."""


def mistake(exc: E) -> E:
    """``exc`` marked with :data:`MISTAKE_MARK` (to raise it)."""
    setattr(exc, MISTAKE_MARK, True)
    return exc


class HandlerBug(RuntimeError):
    """A handler failed with an error of its own making (such as a ``ValidationError``
    from building a model), raised ``from`` it: answered -32603 as that error, logged
    with its traceback."""


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


def error_from_exception(
    exc: BaseException, *, context: str = "handler", messages: bool | None = None
) -> RpcError:
    """Map any exception to the error a peer should see.

    Unexpected exceptions are logged here at ERROR with their traceback (``context``
    names what failed, e.g. the method), so no caller can forget to. ``messages``: put
    the exception's message in the answer (None: :func:`error_messages_default`).
    """
    if isinstance(exc, RpcError):
        return exc
    if isinstance(exc, ValidationError):
        return invalid_params(describe_validation_error(exc))
    leaf = log_unexpected(context, exc)
    return internal_error_for(leaf, messages=messages)


def leaf_exception(exc: BaseException) -> BaseException:
    """The exception that started ``exc``: exception groups (a task group's, at any
    depth) and :class:`HandlerBug` unwrapped; the first failure of a group that has
    several."""
    while True:
        if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            inner = exc.exceptions
            exc = next((e for e in inner if isinstance(e, Exception)), inner[0])
        elif isinstance(exc, HandlerBug) and exc.__cause__ is not None:
            exc = exc.__cause__
        else:
            return exc


def describe_exception(exc: BaseException) -> str:
    """``exc``'s message on one line, clipped (a ``ValidationError`` in its short form)."""
    if isinstance(exc, ValidationError):
        text = describe_validation_error(exc).removeprefix("Invalid params: ")
    else:
        text = " ".join(str(exc).split())
    if len(text) > _MAX_MESSAGE_CHARS:
        text = text[: _MAX_MESSAGE_CHARS - 3] + "..."
    return text


def internal_error_for(exc: BaseException, *, messages: bool | None = None) -> RpcError:
    """-32603 naming ``exc`` (already a leaf): its type, and its masked message unless
    ``messages`` is False (None: :func:`error_messages_default`)."""
    name = type(exc).__name__
    if messages is None:
        messages = error_messages_default()
    text = mask_secrets(describe_exception(exc)) if messages else ""
    data: dict[str, object] = {"exception": name}
    if text:
        data["message"] = text
    message = f"Internal error: {name}: {text}" if text else f"Internal error: {name}"
    return RpcError(INTERNAL_ERROR, message, data)


def log_unexpected(context: str, exc: BaseException) -> BaseException:
    """Log ``exc`` once at ERROR as the code that raised it sees it: the leaf of any
    exception group, its traceback from the first frame outside the runtime (anyio and
    acpwire's own frames above it cut off; none for a :func:`mistake`). Returns the
    leaf."""
    leaf = leaf_exception(exc)
    summary = describe_exception(leaf)
    # A message that starts with the method ("session/request_permission: ...") says it
    # once: the context names it already.
    method = context.rsplit(" ", 1)[-1]
    summary = summary.removeprefix(f"{method}: ")
    name = type(leaf).__name__
    told = getattr(leaf, MISTAKE_MARK, False)
    logger.error(
        "%s failed: %s%s",
        context,
        name,
        f": {summary}" if summary else "",
        exc_info=None if told else (type(leaf), leaf, _from_user_code(leaf.__traceback__)),
    )
    return leaf


_PACKAGE_DIR: Final = str(Path(__file__).parents[1]) + os.sep
_STDLIB_DIR: Final = str(Path(os.__file__).parent) + os.sep


def _runtime_frame(filename: str, anyio_dir: str | None) -> bool:
    """A frame of acpwire, anyio (once loaded: this module is imported before any event
    loop) or the standard library (asyncio, threads), not of installed packages."""
    if filename.startswith((_PACKAGE_DIR, "<frozen")):
        return True
    if anyio_dir is not None and filename.startswith(anyio_dir):
        return True
    return filename.startswith(_STDLIB_DIR) and "site-packages" not in filename


def _from_user_code(tb: TracebackType | None) -> TracebackType | None:
    """``tb`` from its first frame outside the runtime; the whole of it when every frame
    is the runtime's (a bug of acpwire's own)."""
    found = getattr(sys.modules.get("anyio"), "__file__", None)
    anyio_dir = str(Path(found).parent) + os.sep if found else None
    start = tb
    while start is not None and _runtime_frame(start.tb_frame.f_code.co_filename, anyio_dir):
        start = start.tb_next
    return start if start is not None else tb


_MASK: Final = "***"
_TOKEN_SHAPES: Final = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{16,}|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,})"
)
_BEARER: Final = re.compile(r"\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)
_ASSIGNED: Final = re.compile(
    r"""(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)(?P<sep>['"]?\s*[:=]\s*)(?P<quote>['"]?)"""
    r"""(?P<value>[^\s'",;}&]+)"""
)
_MIN_ENV_SECRET: Final = 6
_NOT_SECRETS: Final = frozenset({"None", "null", "True", "False", "true", "false", "''"})


def mask_secrets(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with the secrets it may hold replaced by ``***``: the values of the
    environment's variables whose names look like credentials (``OPENAI_API_KEY``...),
    the value in ``name=value`` / ``"name": "value"`` when the name looks like one, a
    bearer token and the usual key shapes (``sk-...``, ``ghp_...``, ``AKIA...``)."""
    environ = os.environ if env is None else env
    for name, value in environ.items():
        if len(value) >= _MIN_ENV_SECRET and value in text and looks_secret(name):
            text = text.replace(value, _MASK)

    def assigned(match: re.Match[str]) -> str:
        value = match["value"]
        if not looks_secret(match["name"]) or value == _MASK or value in _NOT_SECRETS:
            return match[0]
        if value.replace(".", "", 1).isdigit():  # a count (``tokens=812``), no secret
            return match[0]
        return f"{match['name']}{match['sep']}{match['quote']}{_MASK}"

    text = _ASSIGNED.sub(assigned, text)
    text = _BEARER.sub(lambda match: f"{match[1]} {_MASK}", text)
    return _TOKEN_SHAPES.sub(_MASK, text)


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_PART_CHARS else text[: _MAX_PART_CHARS - 3] + "..."
