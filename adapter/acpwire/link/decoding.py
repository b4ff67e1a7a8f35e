"""The one-pass decoder of an ACP endpoint (mixed into :class:`~acpwire.link.endpoint.AcpEndpoint`).

Valid ACP messages are decoded and validated in one pydantic-core pass; anything else
takes the runtime's general path, which produces the precise JSON-RPC error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeAlias

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import from_json

from acp_v1.dispatch import NO_ID
from acp_v1.methods import MethodSpec
from acpwire.rpc import messages as rpc_messages


class FastDecoder:
    """``decode`` for an endpoint; the endpoint sets the attributes below."""

    _fast: dict[bytes, FastNotification]
    _recent: FastNotification
    _envelopes: Mapping[str, Any]
    _notes_by_bytes: dict[bytes, MethodSpec]

    def _adapter(self, spec: MethodSpec) -> TypeAdapter[Any]:
        raise NotImplementedError

    def decode(self, line: bytes) -> rpc_messages.Incoming:
        """One-pass decode of valid ACP messages; the general decoder for the rest.

        1. A notification in canonical key order (``jsonrpc``, ``method``, ``params``
           last: what SDKs write) validates its params straight from the bytes.
        2. Otherwise the ``method`` value is found in the bytes and the whole message is
           validated against that method's envelope model.
        Either only ever produces a message that is valid as a whole; anything else
        (responses, unknown methods, invalid params, a ``NaN``/``Infinity`` literal, a
        boolean id, nesting too deep for pydantic-core) takes the general path, which
        produces the precise JSON-RPC error. On both ends every line is searched for
        ``NaN``/``Infinity`` first; a line holding only the word (in a string) goes on.
        """
        # pydantic-core's validators read NaN/Infinity literals as floats; JSON has no
        # such values. The pre-check: an "N" in the line (no key of an ACP message holds
        # one; ``int in bytes`` is a bare byte search, without the method call of
        # ``find`` or the failed integer conversion of ``b"N" in``), or "Infinity". Only
        # a hit costs more (:func:`_non_finite`). The body of :func:`holds_non_finite`,
        # inlined: this runs for every streamed update.
        if (_N in line or line.find(b"Infinity") >= 0) and _non_finite(line):
            return rpc_messages.decode_message(line)
        prefix, method, validate, start = self._recent
        if not line.startswith(prefix):
            _, method, validate, start = self._learn(line) if line.startswith(_HEAD) else NO_FAST
        if start and line[-1] == _CLOSE:  # start is 0 only for NO_FAST
            # Params are the rest of the line but its closing brace; anything else
            # fails to parse as exactly one JSON value and falls through.
            try:
                return _Notification(method, validate(line[start:-1]))
            except ValidationError:
                pass
        found = _METHOD.search(line)
        envelope = self._envelopes.get(found.group(1).decode(errors="replace")) if found else None
        if envelope is not None:
            try:
                message: Any = envelope.model_validate_json(line)
            except ValidationError:
                return rpc_messages.decode_message(line)
            msg_id = message.id
            if msg_id is NO_ID:
                return rpc_messages.Notification(message.method, message.params)
            if msg_id is not None and msg_id.__class__ not in _ID_TYPES:
                return rpc_messages.decode_message(line)  # an id a notification may not have
            return rpc_messages.Request(msg_id, message.method, message.params)
        return rpc_messages.decode_message(line)

    def _learn(self, line: bytes) -> FastNotification:
        """The fast path for the notification ``line`` starts, remembered as the most
        recent one (streams repeat one method), or ``NO_FAST`` when it has none."""
        end = line.find(b'"', _HEAD_LEN) + _PARAMS_LEN
        key = line[_HEAD_LEN:end]
        fast = self._fast.get(key)
        if fast is None:
            spec = self._notes_by_bytes.get(key[:-_PARAMS_LEN]) if key.endswith(_PARAMS) else None
            if spec is None:  # unknown names are not cached: a peer could send endless ones
                return NO_FAST
            fast = (line[:end], spec.method, self._json_validator(spec), end)
            self._fast[key] = fast
        self._recent = fast
        return fast

    def _json_validator(self, spec: MethodSpec) -> Callable[[bytes], Any]:
        """(Called once per method: :meth:`_learn` keeps the result.)"""
        model = model_class(spec)
        if model is not None:
            # A model class validates itself (one layer less than a TypeAdapter). Reading
            # the attribute builds a deferred model; the bound method is the compiled
            # validator's own, skipping pydantic's Python wrapper.
            validate: Callable[[bytes], Any] = model.__pydantic_validator__.validate_json
            return validate
        return self._adapter(spec).validate_json


_HEAD: Final = b'{"jsonrpc":"2.0","method":"'
_HEAD_LEN: Final = len(_HEAD)
_PARAMS: Final = b'","params":'
_PARAMS_LEN: Final = len(_PARAMS)
_CLOSE: Final = ord("}")
_ID_TYPES: Final = (int, str)
_Notification: Final = rpc_messages.Notification


FastNotification: TypeAlias = tuple[bytes, str, Callable[[bytes], Any], int]
"""How to decode a notification whose line starts with the prefix (first item): its
method, the validator of its params, and where they start (they end at the line's
closing brace). A plain tuple: unpacking one is quicker than a NamedTuple's."""


def _never(_: bytes) -> Any:
    raise AssertionError("the placeholder fast path matches no line")


NO_FAST: Final[FastNotification] = (b"\0", "", _never, 0)
"""No fast path: its prefix (a NUL byte) starts no JSON line."""
_N: Final = ord("N")
"""The first byte of ``NaN``, as ``int in bytes`` wants it."""
_METHOD: Final = re.compile(rb'"method"\s*:\s*"([^"\\]{1,128})"')


def holds_non_finite(line: bytes) -> bool:
    """Whether ``line`` holds a ``NaN``/``Infinity`` literal (JSON has neither), not only
    the word inside a string: the check every decode of an endpoint makes first."""
    return (_N in line or line.find(b"Infinity") >= 0) and _non_finite(line)


def _non_finite(line: bytes) -> bool:
    """Whether ``line``, which holds an "N" or "Infinity", is to take the general path:
    a strict parse (only for a line holding "NaN" or "Infinity") tells a literal from a
    string holding the word. A line it refuses (a literal, or a lone surrogate escape it
    cannot read) goes to the general path, which refuses the literal and reads the
    escape; a line holding only the word stays on the fast path."""
    if line.find(b"NaN") < 0 and line.find(b"Infinity") < 0:
        return False
    try:
        from_json(line, allow_inf_nan=False, cache_strings=False)
    except ValueError:
        return True
    return False


def model_class(spec: MethodSpec) -> type[BaseModel] | None:
    """The params type of ``spec`` when it is a model class (not a union alias)."""
    params = spec.params
    return params if isinstance(params, type) and issubclass(params, BaseModel) else None
