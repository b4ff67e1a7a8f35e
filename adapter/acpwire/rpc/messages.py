"""JSON-RPC 2.0 message kinds, the default decoder and the envelope encoders.

Decoding turns one line into exactly one :data:`Incoming` value and never raises for bad
input: anything that is not a valid JSON-RPC object becomes an :class:`InvalidMessage`
carrying the error to answer with, or only to log: an object without an ``id`` member is
a notification, never answered whatever is wrong with it (so is an answer to us). A line
nested too deeply to parse is classified by its top-level members all the same: a
request whose id can be read gets -32602 with that id; one that is not JSON (its
brackets never close) gets -32700. A typed layer can install its own one-pass decoder
(``Connection(decode=...)``) and reuse :func:`message_from_json` for the envelope rules.

Encoding splices pydantic models' own JSON bytes into the envelope (no dict round trip);
other values go through ``json.dumps``. Methods are plain strings: nothing here knows ACP.
The message dataclasses are treated as immutable; they are not ``frozen`` only because
that makes each one cost twice as much to create on the per-message hot path.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, TypeAlias, TypeGuard

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from ._strict import MAX_DEPTH, TooDeep, load_strict, outline
from .errors import INTERNAL_ERROR, RpcError, invalid_params, invalid_request, parse_error
from .framing import encode_line

RequestId: TypeAlias = int | str | None
"""JSON-RPC ids: an integer, a string, or null."""


@dataclass(slots=True)
class Request:
    id: RequestId
    method: str
    params: object = None


@dataclass(slots=True)
class Notification:
    method: str
    params: object = None


@dataclass(slots=True)
class Response:
    id: RequestId
    result: object


@dataclass(slots=True)
class ErrorResponse:
    id: RequestId
    error: RpcError


@dataclass(slots=True)
class InvalidMessage:
    """A line that is not a usable message; ``error`` is answered with ``id`` if ``reply``
    (never for a notification or a response: those are only logged)."""

    error: RpcError
    id: RequestId = None
    reply: bool = True


Incoming: TypeAlias = Request | Notification | Response | ErrorResponse | InvalidMessage
Decoder: TypeAlias = Callable[[bytes], Incoming]

_JSONRPC: Final = b'{"jsonrpc":"2.0"'


def decode_message(line: bytes) -> Incoming:
    """The default decoder: strict JSON (:func:`~._strict.load_strict`) plus
    :func:`message_from_json`; a line nested too deeply: :func:`too_deep`."""
    try:
        obj = load_strict(line)
    except TooDeep:
        return too_deep(line)
    except json.JSONDecodeError as exc:
        return InvalidMessage(parse_error(f"{exc.msg} at character {exc.pos}"))
    except UnicodeDecodeError:
        return InvalidMessage(parse_error("message is not valid UTF-8"))
    except ValueError as exc:
        return InvalidMessage(parse_error(str(exc)))
    return message_from_json(obj)


def too_deep(line: bytes) -> Incoming:
    """A line nesting arrays and objects more deeply than :data:`~._strict.MAX_DEPTH`.

    Read without its nesting (:func:`~._strict.outline`): not JSON (an unclosed array,
    a line cut off) is a parse error; otherwise its top-level members decide, under the
    envelope rules of :func:`message_from_json`. A request is refused -32602 with its
    id (-32600 when what is too deep is not its params), a notification is dropped,
    an answer fails the request of ours it answers.
    """
    try:
        shape = outline(line)
    except UnicodeDecodeError:
        return InvalidMessage(parse_error("message is not valid UTF-8"))
    except ValueError as exc:
        return InvalidMessage(parse_error(str(exc)))
    msg = message_from_json(shape.value)
    where = "JSON" if shape.deepest is None else json.dumps(shape.deepest)[:64]
    detail = f"{where} nested deeper than {MAX_DEPTH} levels (the limit)"
    if isinstance(msg, Request | Notification):
        if shape.deepest == "params":
            error = invalid_params(f"Invalid params: {detail}")
        else:
            error = invalid_request(detail)
        if isinstance(msg, Notification):
            return InvalidMessage(error, reply=False)
        return InvalidMessage(error, msg.id)
    if isinstance(msg, Response | ErrorResponse):
        return ErrorResponse(msg.id, invalid_request(f"the peer's answer: {detail}"))
    if isinstance(shape.value, list):  # not a batch to refuse: a value too deep
        return InvalidMessage(invalid_request(detail))
    return msg


def message_from_json(obj: object) -> Incoming:
    """Classify a decoded JSON value under the JSON-RPC 2.0 envelope rules."""
    if isinstance(obj, list):
        return InvalidMessage(
            invalid_request("batch arrays are not supported; send one JSON object per line")
        )
    if not isinstance(obj, dict):
        return InvalidMessage(invalid_request(f"expected a JSON object, got {_json_kind(obj)}"))

    has_id = "id" in obj
    raw_id = obj.get("id")
    msg_id: RequestId = None
    id_ok = False
    if _is_request_id(raw_id):
        msg_id, id_ok = raw_id, True
    is_response = "method" not in obj and ("result" in obj or "error" in obj)

    # Answer only what has an "id" member (an invalid one included, with id null) and is
    # no response. A notification is never answered, whatever is wrong with it; nor a
    # response: the peer is waiting for nothing, and two peers replying to each other's
    # bad replies could loop.
    reply = has_id and not is_response

    def invalid(detail: str) -> InvalidMessage:
        return InvalidMessage(invalid_request(detail), msg_id, reply=reply)

    if obj.get("jsonrpc") != "2.0":
        return invalid('"jsonrpc" must be "2.0"')
    if has_id and not id_ok:
        return invalid(f'"id" must be a string, an integer or null, got {_json_kind(raw_id)}')

    if "method" in obj:
        method = obj["method"]
        if not isinstance(method, str):
            return invalid(f'"method" must be a string, got {_json_kind(method)}')
        params = obj.get("params")
        if params is not None and not isinstance(params, dict | list):
            return invalid(f'"params" must be an object or an array, got {_json_kind(params)}')
        if has_id:
            return Request(msg_id, method, params)
        return Notification(method, params)

    if not is_response:
        return invalid('a message needs "method" (request or notification) or "result"/"error"')
    if not has_id:
        return invalid('a response needs an "id"')
    if "error" in obj:
        if "result" in obj:
            detail = "Malformed response from peer: it has both 'result' and 'error'"
            return ErrorResponse(msg_id, RpcError(INTERNAL_ERROR, detail))
        return ErrorResponse(msg_id, RpcError.from_json(obj["error"]))
    return Response(msg_id, obj["result"])


_OPEN: Final = re.compile(rb"\s*\{")
_KEY: Final = re.compile(rb'\s*"((?:[^"\\]|\\.)*)"\s*:\s*')
_SCALAR: Final = re.compile(rb'-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*"|null|true|false')
_NEXT: Final = re.compile(rb"\s*[,}]")


def leading_id(head: bytes) -> tuple[RequestId, bool]:
    """``(id, is_response)`` of a JSON-RPC message told from the first bytes of its line:
    its top-level members are read up to the first object or array value (SDKs write
    ``jsonrpc``, ``id``, ``method`` first). ``is_response``: no ``method`` came before a
    ``result`` or ``error`` member. The id is None when it cannot be told. For answering
    a line too long to parse, so that the request it carried fails at once."""
    found = _OPEN.match(head)
    pos = found.end() if found else -1
    msg_id: RequestId = None
    method = False
    while pos >= 0:
        key = _KEY.match(head, pos)
        if key is None:
            break
        name = key.group(1)
        value = _SCALAR.match(head, key.end())
        after = _NEXT.match(head, value.end()) if value else None
        if value is None or after is None:
            # A structured value, or the head ends inside this member.
            return msg_id, not method and name in (b"result", b"error")
        if name == b"id":
            parsed = json.loads(value.group())
            msg_id = parsed if _is_request_id(parsed) else None
        method = method or name == b"method"
        pos = after.end() if after.group().endswith(b",") else -1
    return msg_id, False


def encode_request(msg_id: RequestId, method: str, params: object = None) -> bytes:
    _check_params(params)
    if params is None:
        return encode_line(_JSONRPC, _id_part(msg_id), _method_part(method), b"}")
    return encode_line(
        _JSONRPC, _id_part(msg_id), _method_part(method), b',"params":', encode_value(params), b"}"
    )


def encode_notification(method: str, params: object = None) -> bytes:
    if isinstance(params, BaseModel):  # the hot path: one serializer call, one join
        try:
            body = params.__pydantic_serializer__.to_json(params, by_alias=True, exclude_none=True)
        except PydanticSerializationError:
            body = _model_json(params)
        return b"".join((_JSONRPC, _method_part(method), b',"params":', body, b"}\n"))
    _check_params(params)
    if params is None:
        return encode_line(_JSONRPC, _method_part(method), b"}")
    return encode_line(_JSONRPC, _method_part(method), b',"params":', encode_value(params), b"}")


def encode_notification_raw(method: str, params_json: bytes) -> bytes:
    """A notification frame around params that are already JSON bytes."""
    if not params_json.startswith(b"{") or b"\n" in params_json:
        raise ValueError("params must be one JSON object without raw newlines")
    return b"".join((_JSONRPC, _method_part(method), b',"params":', params_json, b"}\n"))


def encode_result(msg_id: RequestId, result: object) -> bytes:
    return encode_line(
        _JSONRPC, b',"id":', _dumps(msg_id), b',"result":', encode_value(result), b"}"
    )


def encode_error(msg_id: RequestId, error: RpcError) -> bytes:
    return encode_line(
        _JSONRPC, b',"id":', _dumps(msg_id), b',"error":', _dumps(error.to_json()), b"}"
    )


def encode_value(value: object) -> bytes:
    """JSON bytes for params or a result.

    A pydantic model serializes itself straight to bytes (by alias, ``None`` fields
    left out); anything else goes through ``json.dumps``, where nested models are
    allowed. NaN/Infinity and unserializable objects raise ``ValueError``/``TypeError``.
    """
    if isinstance(value, BaseModel):
        try:
            return value.__pydantic_serializer__.to_json(value, by_alias=True, exclude_none=True)
        except PydanticSerializationError:
            return _model_json(value)
    return _dumps(value)


def _model_json(model: BaseModel) -> bytes:
    """A model pydantic-core cannot write as UTF-8 JSON (a lone surrogate in its text:
    half an emoji from a model or a JavaScript client): through ``json`` with escapes."""
    return _dumps(model.model_dump(mode="json", by_alias=True, exclude_none=True))


def _id_part(msg_id: RequestId) -> bytes:
    if isinstance(msg_id, int) and not isinstance(msg_id, bool):
        return b',"id":%d' % msg_id
    return b',"id":' + _dumps(msg_id)


@functools.lru_cache(maxsize=256)
def _method_part(method: str) -> bytes:
    # The same few method names go out thousands of times per prompt turn.
    return b',"method":' + _dumps(method)


def _check_params(params: object) -> None:
    # JSON-RPC params are structured; the peer would reject anything else as invalid.
    if params is not None and not isinstance(params, dict | list | tuple | BaseModel):
        raise TypeError(f"params must be an object, an array or a model, got {_json_kind(params)}")


def _dumps(value: object) -> bytes:
    try:
        return json.dumps(
            value,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
            default=_model_default,
        ).encode()
    except UnicodeEncodeError:
        # A lone surrogate (legal in a JSON string escape) cannot be UTF-8: escape it
        # again so it round-trips exactly.
        return json.dumps(
            value, separators=(",", ":"), ensure_ascii=True, allow_nan=False, default=_model_default
        ).encode()


def _model_default(value: object) -> object:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    raise TypeError(f"object of type {type(value).__name__} is not JSON serializable")


def _is_request_id(value: object) -> TypeGuard[RequestId]:
    return (
        value is None
        or isinstance(value, str)
        or (isinstance(value, int) and not isinstance(value, bool))
    )


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
