"""The typed ACP layer over the JSON-RPC runtime: routes, validation and fast decoding.

:class:`AcpEndpoint` is the :class:`~acpwire.rpc.RpcHandler` of one side of an ACP
connection. It routes each incoming method through the generated method table to the
matching method of a typed handler object (an ``acp_v1.interfaces.Agent`` or ``Client``
implementation), validating params into the generated models:

* unknown methods, and methods the handler does not implement (including declarations
  merely inherited from the interface Protocol), answer -32601, never ``null``;
* unstable methods answer -32601 unless the endpoint opted in;
* ``_``-prefixed extension methods and notifications go to an optional hook; a handler
  that is :class:`RetiredMethods` answers methods the protocol has removed;
* ``_meta`` stays the ``meta`` field of the params model, never merged into anything.

It also supplies the connection's decoder: valid ACP messages are decoded and validated
in one pydantic-core pass; anything else takes the runtime's general path, which
produces the precise JSON-RPC error.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any, Final, Literal, Protocol, TypeAlias, runtime_checkable

import anyio
from pydantic import BaseModel, TypeAdapter, ValidationError

from acp_v1 import dispatch, interfaces, methods
from acp_v1.dispatch import NO_ID
from acp_v1.methods import MethodSpec

from .rpc import RequestContext, internal_error, messages as rpc_messages, method_not_found

logger = logging.getLogger(__name__)

Role = Literal["agent", "client"]
_CURRENT: ContextVar[RequestContext | None] = ContextVar("acpwire_request", default=None)


def after_answer(callback: Callable[[], Awaitable[None]]) -> bool:
    """Run ``callback`` right after the current request's answer is written.

    For notifications a client must only see once it has the answer (Zed drops
    ``session/update``s for a session it does not know yet). Returns False, doing
    nothing, outside a request handler.
    """
    ctx = _CURRENT.get()
    if ctx is None:
        return False
    ctx.after_answer.append(callback)
    return True


_PROTOCOL_STUBS: Final = {"agent": interfaces.Agent, "client": interfaces.Client}


class ExtensionHandler(Protocol):
    """Receives ``_``-prefixed methods (name without the underscore) and notifications."""

    async def ext_method(self, method: str, params: object) -> object: ...
    async def ext_notification(self, method: str, params: object) -> None: ...


@runtime_checkable
class RetiredMethods(Protocol):
    """A handler that still answers requests for methods the protocol has removed (and
    some clients still send); it raises ``method_not_found`` for the rest."""

    async def retired_method(self, method: str, params: object) -> object: ...


class AcpEndpoint:
    """Route one side's incoming ACP messages to a typed handler object."""

    def __init__(
        self,
        role: Role,
        handler: object | None = None,
        *,
        unstable: bool = False,
        extensions: ExtensionHandler | None = None,
    ) -> None:
        self.role: Role = role
        self._agent = role == "agent"
        self.unstable = unstable
        self._extensions = extensions
        self._requests = methods.AGENT_REQUESTS if role == "agent" else methods.CLIENT_REQUESTS
        self._notifications: Mapping[str, MethodSpec] = (
            methods.AGENT_NOTIFICATIONS if role == "agent" else methods.CLIENT_NOTIFICATIONS
        )
        self._bound: dict[str, Callable[[Any], Awaitable[Any]] | None] = {}
        self._note_routes: dict[str, tuple[Callable[[Any], Awaitable[Any]], type | None]] = {}
        self._adapters: dict[str, TypeAdapter[Any]] = {}
        self._fast: dict[bytes, _FastNotification] = {}
        self._recent = _NO_FAST
        self._handler = handler
        self._upgrade: Callable[[], Awaitable[object]] | None = None
        self._upgrade_lock: anyio.Lock | None = None
        # Envelope modules are imported on first lookup, so only the methods a connection
        # actually receives cost their models' import.
        self._envelopes = dispatch.AGENT_ENVELOPES if role == "agent" else dispatch.CLIENT_ENVELOPES
        self._notes_by_bytes = {
            method.encode(): spec for method, spec in self._notifications.items()
        }

    def bind(self, handler: object) -> None:
        """Set the handler object (for handlers that need the connection to exist first)."""
        self._handler = handler
        self._bound.clear()
        self._note_routes.clear()

    def upgrade_with(self, upgrade: Callable[[], Awaitable[object]]) -> None:
        """A staged start: until :meth:`upgrade` has run, a method the bound handler does
        not implement first runs ``upgrade`` and goes to the handler it returns (a light
        handler answers ``initialize`` while the full one is loaded)."""
        self._upgrade = upgrade

    async def upgrade(self) -> None:
        """Run the pending upgrade, once; a call during it waits for it to finish."""
        if self._upgrade_lock is None:
            self._upgrade_lock = anyio.Lock()
        async with self._upgrade_lock:
            if self._upgrade is not None:
                self.bind(await self._upgrade())
                self._upgrade = None

    # -- routing ---------------------------------------------------------------------

    def implements(self, method: str) -> bool:
        """Whether a request or notification ``method`` would reach a handler."""
        spec = self._requests.get(method) or self._notifications.get(method)
        return spec is not None and self._allowed(spec) and self._bind(spec) is not None

    def _allowed(self, spec: MethodSpec) -> bool:
        return self.unstable or not spec.unstable

    def _bind(self, spec: MethodSpec) -> Callable[[Any], Awaitable[Any]] | None:
        if self._handler is None:
            return None
        if spec.method in self._bound:
            return self._bound[spec.method]
        name = spec.handler
        impl = getattr(type(self._handler), name, None)
        stub = getattr(_PROTOCOL_STUBS[self.role], name, None)
        bound = None if impl is None or impl is stub else getattr(self._handler, name)
        self._bound[spec.method] = bound
        return bound

    async def _route(self, spec: MethodSpec) -> Callable[[Any], Awaitable[Any]] | None:
        """The handler method for ``spec``, upgrading the handler first when the bound one
        lacks it and an upgrade is pending."""
        handler = self._bind(spec)
        if handler is None and self._upgrade is not None:
            await self.upgrade()
            handler = self._bind(spec)
        return handler

    def _params(self, spec: MethodSpec, params: object) -> object:
        if isinstance(params, BaseModel):
            return params  # built by the decoder from this method's own params type
        return self._adapter(spec).validate_python({} if params is None else params)

    async def on_request(self, method: str, params: object, ctx: RequestContext) -> object:
        spec = self._requests.get(method)
        if spec is None or not self._allowed(spec):
            if method.startswith("_") and self._extensions is not None:
                return await self._extensions.ext_method(method[1:], params)
            if spec is None and isinstance(self._handler, RetiredMethods):
                return await self._handler.retired_method(method, params)
            raise method_not_found(method)
        handler = await self._route(spec)
        if handler is None:
            raise method_not_found(method)
        token = _CURRENT.set(ctx)
        try:
            result = await handler(self._initialize_params(spec, params))
        finally:
            _CURRENT.reset(token)
        if result is None:
            # A request always has a result type; None would reach the peer as `null`.
            logger.error("%s handler %s returned None", self.role, spec.handler)
            raise internal_error(f"{method}: the handler returned no result")
        return result

    async def on_notification(self, method: str, params: object) -> None:
        route = self._note_routes.get(method)
        if route is None:
            await self._unrouted_notification(method, params)
            return
        handler, params_type = route
        if params_type is None or type(params) is not params_type:  # not built by decode
            try:
                params = self._params(self._notifications[method], params)
            except ValidationError as exc:
                logger.warning("dropped invalid %s notification: %s", method, _short(exc))
                return
        await handler(params)

    async def _unrouted_notification(self, method: str, params: object) -> None:
        """First sight of ``method``: cache its route and deliver, or say where it went."""
        spec = self._notifications.get(method)
        if spec is None or not self._allowed(spec):
            if method.startswith("_") and self._extensions is not None:
                await self._extensions.ext_notification(method[1:], params)
            elif not method.startswith("$/"):
                logger.info("ignored unknown notification %r", method)
            return
        handler = await self._route(spec)
        if handler is None:
            logger.info("ignored notification %r: not implemented", method)
            return
        self._note_routes[method] = (handler, _model_class(spec))
        await self.on_notification(method, params)

    # -- decoding --------------------------------------------------------------------

    def decode(self, line: bytes) -> rpc_messages.Incoming:
        """One-pass decode of valid ACP messages; the general decoder for the rest.

        1. A notification in canonical key order (``jsonrpc``, ``method``, ``params``
           last: what SDKs write) validates its params straight from the bytes.
        2. Otherwise the ``method`` value is found in the bytes and the whole message is
           validated against that method's envelope model.
        Either only ever produces a message that is valid as a whole; anything else
        (responses, unknown methods, invalid params, ``NaN``/``Infinity`` anywhere in the
        line, a boolean id, nesting too deep for pydantic-core) takes the general path,
        which produces the precise JSON-RPC error. (On a client's end, the canonical
        notifications of step 1, the stream of updates, are not searched for ``NaN``.)
        """
        # pydantic-core reads NaN/Infinity literals as floats; JSON has no such values.
        # The general path tells a literal (refused) from a string holding the word. An
        # agent checks every line; a client's stream of updates (the fast path) is not
        # searched, only what takes the envelope path.
        if self._agent and (b"NaN" in line or b"Infinity" in line):
            return rpc_messages.decode_message(line)
        prefix, method, validate, start = self._recent
        if not line.startswith(prefix):
            _, method, validate, start = self._learn(line) if line.startswith(_HEAD) else _NO_FAST
        if start and line[-1] == _CLOSE:  # start is 0 only for _NO_FAST
            # Params are the rest of the line but its closing brace; anything else
            # fails to parse as exactly one JSON value and falls through.
            try:
                return _Notification(method, validate(line[start:-1]))
            except ValidationError:
                pass
        if b"NaN" in line or b"Infinity" in line:
            return rpc_messages.decode_message(line)
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

    def _initialize_params(self, spec: MethodSpec, params: object) -> object:
        """Params for ``spec``; an ``initialize`` whose ``protocolVersion`` is not an
        integer (date strings from MCP-style clients, ``"1"``) is not coerced but read as
        a version we do not speak, so negotiation answers ours and the client decides."""
        try:
            return self._params(spec, params)
        except ValidationError as exc:
            if spec.method != methods.INITIALIZE or not isinstance(params, dict):
                raise
            if any(err["loc"][:1] != ("protocolVersion",) for err in exc.errors()):
                raise
            logger.warning(
                "initialize with protocolVersion %r: not a version we speak",
                params.get("protocolVersion"),
            )
            return self._params(spec, {**params, "protocolVersion": 0})

    def _learn(self, line: bytes) -> _FastNotification:
        """The fast path for the notification ``line`` starts, remembered as the most
        recent one (streams repeat one method), or ``_NO_FAST`` when it has none."""
        end = line.find(b'"', _HEAD_LEN) + _PARAMS_LEN
        key = line[_HEAD_LEN:end]
        fast = self._fast.get(key)
        if fast is None:
            spec = self._notes_by_bytes.get(key[:-_PARAMS_LEN]) if key.endswith(_PARAMS) else None
            if spec is None:  # unknown names are not cached: a peer could send endless ones
                return _NO_FAST
            fast = (line[:end], spec.method, self._json_validator(spec), end)
            self._fast[key] = fast
        self._recent = fast
        return fast

    def _json_validator(self, spec: MethodSpec) -> Callable[[bytes], Any]:
        """(Called once per method: :meth:`_learn` keeps the result.)"""
        model = _model_class(spec)
        if model is not None:
            # A model class validates itself (one layer less than a TypeAdapter). Reading
            # the attribute builds a deferred model; the bound method is the compiled
            # validator's own, skipping pydantic's Python wrapper.
            validate: Callable[[bytes], Any] = model.__pydantic_validator__.validate_json
            return validate
        return self._adapter(spec).validate_json

    def _adapter(self, spec: MethodSpec) -> TypeAdapter[Any]:
        adapter = self._adapters.get(spec.method)
        if adapter is None:
            adapter = self._adapters[spec.method] = TypeAdapter(spec.params)
        return adapter


_HEAD: Final = b'{"jsonrpc":"2.0","method":"'
_HEAD_LEN: Final = len(_HEAD)
_PARAMS: Final = b'","params":'
_PARAMS_LEN: Final = len(_PARAMS)
_CLOSE: Final = ord("}")
_ID_TYPES: Final = (int, str)
_Notification: Final = rpc_messages.Notification


_FastNotification: TypeAlias = tuple[bytes, str, Callable[[bytes], Any], int]
"""How to decode a notification whose line starts with the prefix (first item): its
method, the validator of its params, and where they start (they end at the line's
closing brace). A plain tuple: unpacking one is quicker than a NamedTuple's."""


def _never(_: bytes) -> Any:
    raise AssertionError("the placeholder fast path matches no line")


_NO_FAST: Final[_FastNotification] = (b"\0", "", _never, 0)
"""No fast path: its prefix (a NUL byte) starts no JSON line."""
_METHOD: Final = re.compile(rb'"method"\s*:\s*"([^"\\]{1,128})"')


def _model_class(spec: MethodSpec) -> type[BaseModel] | None:
    """The params type of ``spec`` when it is a model class (not a union alias)."""
    params = spec.params
    return params if isinstance(params, type) and issubclass(params, BaseModel) else None


def _short(exc: ValidationError) -> str:
    first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": str(exc)}
    return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
