"""Protocol-agnostic JSON-RPC 2.0 runtime: NDJSON framing, stdio and memory transports,
request correlation, cancellation, ordering and error mapping.

Methods are plain strings and params are opaque here; the typed ACP layer sits above.
This package imports only the stdlib, anyio and pydantic. Its names load on first access:
the message codec (``messages``, ``errors``) needs no event loop, so the ``acpwire``
command can answer ``initialize`` before anyio is imported.
"""

from typing import TYPE_CHECKING

from acpwire._exports import lazy_exports

if TYPE_CHECKING:
    from .connection import CANCEL_REQUEST_METHOD, DEFAULT_BENIGN_PROBES, Connection
    from .errors import (
        AUTH_REQUIRED,
        INTERNAL_ERROR,
        INVALID_PARAMS,
        INVALID_REQUEST,
        METHOD_NOT_FOUND,
        PARSE_ERROR,
        REQUEST_CANCELLED,
        RESOURCE_NOT_FOUND,
        ConnectionClosedError,
        RpcError,
        auth_required,
        error_from_exception,
        internal_error,
        invalid_params,
        invalid_request,
        method_not_found,
        parse_error,
        request_cancelled,
        resource_not_found,
    )
    from .framing import DEFAULT_MAX_LINE_BYTES, LineReader, OversizedLine, encode_line
    from .handling import RequestContext, RpcHandler
    from .messages import (
        Decoder,
        ErrorResponse,
        Incoming,
        InvalidMessage,
        Notification,
        Request,
        RequestId,
        Response,
        decode_message,
        encode_value,
        message_from_json,
    )
    from .transport import StreamPair, memory_pair, stdio_streams

_WHERE: dict[str, str] = {
    **dict.fromkeys(
        ["CANCEL_REQUEST_METHOD", "Connection", "DEFAULT_BENIGN_PROBES"], "acpwire.rpc.connection"
    ),
    **dict.fromkeys(
        [
            "AUTH_REQUIRED",
            "ConnectionClosedError",
            "INTERNAL_ERROR",
            "INVALID_PARAMS",
            "INVALID_REQUEST",
            "METHOD_NOT_FOUND",
            "PARSE_ERROR",
            "REQUEST_CANCELLED",
            "RESOURCE_NOT_FOUND",
            "RpcError",
            "auth_required",
            "error_from_exception",
            "internal_error",
            "invalid_params",
            "invalid_request",
            "method_not_found",
            "parse_error",
            "request_cancelled",
            "resource_not_found",
        ],
        "acpwire.rpc.errors",
    ),
    **dict.fromkeys(
        ["DEFAULT_MAX_LINE_BYTES", "LineReader", "OversizedLine", "encode_line"],
        "acpwire.rpc.framing",
    ),
    **dict.fromkeys(["RequestContext", "RpcHandler"], "acpwire.rpc.handling"),
    **dict.fromkeys(
        [
            "Decoder",
            "ErrorResponse",
            "Incoming",
            "InvalidMessage",
            "Notification",
            "Request",
            "RequestId",
            "Response",
            "decode_message",
            "encode_value",
            "message_from_json",
        ],
        "acpwire.rpc.messages",
    ),
    **dict.fromkeys(["StreamPair", "memory_pair", "stdio_streams"], "acpwire.rpc.transport"),
}

__all__ = [
    "AUTH_REQUIRED",
    "CANCEL_REQUEST_METHOD",
    "DEFAULT_BENIGN_PROBES",
    "DEFAULT_MAX_LINE_BYTES",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "RESOURCE_NOT_FOUND",
    "Connection",
    "ConnectionClosedError",
    "Decoder",
    "ErrorResponse",
    "Incoming",
    "InvalidMessage",
    "LineReader",
    "Notification",
    "OversizedLine",
    "Request",
    "RequestContext",
    "RequestId",
    "Response",
    "RpcError",
    "RpcHandler",
    "StreamPair",
    "auth_required",
    "decode_message",
    "encode_line",
    "encode_value",
    "error_from_exception",
    "internal_error",
    "invalid_params",
    "invalid_request",
    "memory_pair",
    "message_from_json",
    "method_not_found",
    "parse_error",
    "request_cancelled",
    "resource_not_found",
    "stdio_streams",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__ = lazy_exports(__name__, _WHERE)
