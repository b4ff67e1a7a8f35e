"""The typed ACP layer over the JSON-RPC runtime: routes, validation and fast decoding.

:class:`AcpEndpoint` is the :class:`~acpwire.rpc.RpcHandler` of one side of an ACP
connection. It routes each incoming method through the generated method table to the
matching method of a typed handler object (an ``acp_v1.interfaces.Agent`` or ``Client``
implementation), validating params into the generated models:

* unknown methods, and methods the handler does not implement (including declarations
  merely inherited from the interface Protocol), answer -32601, never ``null``;
* unstable methods answer -32601 unless the endpoint opted in (logged as such);
* ``_``-prefixed extension methods and notifications go to the handler's
  :func:`~acpwire.link.handlers.ext_method` / ``ext_notification`` methods, then to an
  optional hook (both get the wire name, underscore included); a handler that is
  :class:`RetiredMethods` answers methods the protocol has removed;
* params the peer got wrong answer -32602; a ``ValidationError`` raised by the handler's
  own code is a bug on this side: -32603, with its traceback in the log;
* ``_meta`` stays the ``meta`` field of the params model, never merged into anything.

A handler is checked when it is bound (:func:`acpwire.link.handlers.check_handler`). The
``_``-prefixed calls are routed by :class:`acpwire.link.handlers.ExtensionCalls`, mixed in
here; the handler-side types (:class:`ExtensionHandler`, :class:`RetiredMethods`,
:class:`HandlerBug`) live in :mod:`acpwire.link.handlers` and are re-exported.

It also supplies the connection's decoder (``decode``, from :mod:`acpwire.link.decoding`):
valid ACP messages are decoded and validated in one pydantic-core pass; anything else
takes the runtime's general path, which produces the precise JSON-RPC error.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final, Literal

import anyio
from pydantic import BaseModel, TypeAdapter, ValidationError

from acp_v1 import DECODE, dispatch, interfaces, methods
from acp_v1.methods import MethodSpec
from acpwire.rpc import (
    RequestContext,
    invalid_params,
    method_not_found,
)
from acpwire.rpc.errors import describe_validation_error

if TYPE_CHECKING:
    from acpwire.probe.signals import ClientSignals

from .decoding import NO_FAST, FastDecoder, FastNotification, model_class
from .handlers import (
    CapabilityError,
    ExtensionCalls,
    ExtensionHandler,
    ExtensionRoute,
    HandlerBug,
    RetiredMethods,
    check_handler,
    check_result,
    extension_routes,
    short_error,
)

__all__ = [
    "AcpEndpoint",
    "CapabilityError",
    "ExtensionHandler",
    "HandlerBug",
    "RetiredMethods",
    "Role",
    "after_answer",
]

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


def _wire(params: object) -> Mapping[str, object]:
    """A request's params as they go on the wire (what the capability rules read)."""
    if isinstance(params, BaseModel):
        dumped: Mapping[str, object] = params.model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
        return dumped
    return params if isinstance(params, Mapping) else {}


class AcpEndpoint(FastDecoder, ExtensionCalls):
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
        self.unstable = unstable
        self._extensions = extensions
        self._requests = methods.AGENT_REQUESTS if role == "agent" else methods.CLIENT_REQUESTS
        self._notifications: Mapping[str, MethodSpec] = (
            methods.AGENT_NOTIFICATIONS if role == "agent" else methods.CLIENT_NOTIFICATIONS
        )
        self._bound: dict[str, Callable[[Any], Awaitable[Any]] | None] = {}
        self._note_routes: dict[str, tuple[Callable[[Any], Awaitable[Any]], type | None]] = {}
        self._adapters: dict[str, TypeAdapter[Any]] = {}
        self._fast: dict[bytes, FastNotification] = {}
        self._recent = NO_FAST
        self._handler: object | None = None
        self._ext_routes: dict[str, ExtensionRoute] = {}
        if handler is not None:
            self.bind(handler)
        self._upgrade: Callable[[], Awaitable[object]] | None = None
        self._client: ClientSignals | None = None
        self._agent_caps: Mapping[str, object] | None = None
        self._upgrade_lock: anyio.Lock | None = None
        # Envelope modules are imported on first lookup, so only the methods a connection
        # actually receives cost their models' import.
        self._envelopes = dispatch.AGENT_ENVELOPES if role == "agent" else dispatch.CLIENT_ENVELOPES
        self._notes_by_bytes = {
            method.encode(): spec for method, spec in self._notifications.items()
        }

    def bind(self, handler: object) -> None:
        """Set the handler object (for handlers that need the connection to exist first).

        Raises :class:`~acpwire.link.handlers.HandlerError` when it does not fit the role (a
        misspelled or SDK-style method name, the other role's interface)."""
        check_handler(self.role, handler)
        self._ext_routes = extension_routes(handler)
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

    # -- what the peer advertised ------------------------------------------------------

    def _client_capabilities(self, params: object) -> None:
        """Remember what the client's ``initialize`` advertises (an agent's endpoint)."""
        if isinstance(params, BaseModel):
            from acpwire.probe.signals import read_initialize  # an agent's endpoint only

            self._client = read_initialize(params)[1]

    def observe_answer(self, method: str, result: object) -> None:
        """Remember what the agent's ``initialize`` answer advertises (a client's
        endpoint: the connection's ``after_response``)."""
        if method == methods.INITIALIZE and isinstance(result, Mapping):
            caps = result.get("agentCapabilities")
            self._agent_caps = caps if isinstance(caps, Mapping) else {}

    def check_outgoing(self, method: str, params: object) -> None:
        """Before a request to the peer: raise :class:`CapabilityError` when it uses what
        the peer's ``initialize`` did not advertise (an agent's ``fs/*``, ``terminal/*``,
        ``elicitation/*``; a client's ``session/load``, ``session/list``..., an MCP
        transport, a prompt's image...: :mod:`acpwire.probe.requirements`). Nothing is
        checked before that ``initialize`` was seen."""
        if self.role == "agent":
            signals = self._client
            if signals is None:
                return
            from acpwire.probe.requirements import TO_CLIENT_CHECKED, to_client

            if method not in TO_CLIENT_CHECKED:
                return
            gaps = to_client(method, _wire(params), signals)
        else:
            caps = self._agent_caps
            if caps is None:
                return
            from acpwire.probe.requirements import TO_AGENT_CHECKED, to_agent

            if method not in TO_AGENT_CHECKED:
                return
            gaps = to_agent(method, _wire(params), caps)
        if gaps:
            gap = gaps[0]
            raise CapabilityError(
                f"{gap.sent}: the {gap.side}'s initialize did not advertise {gap.capability}: "
                f"check it before calling ({gap.spec})"
            )

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
        return self._adapter(spec).validate_python({} if params is None else params, context=DECODE)

    async def on_request(self, method: str, params: object, ctx: RequestContext) -> object:
        spec = self._requests.get(method)
        if spec is None or not self._allowed(spec):
            if method.startswith("_"):
                return await self._ext_request(method, params, ctx)
            if spec is None and isinstance(self._handler, RetiredMethods):
                return await self._handler.retired_method(method, params)
            raise method_not_found(method, self._why_not(spec))
        handler = await self._route(spec)
        if handler is None:
            raise method_not_found(method, "not implemented by the handler")
        try:
            typed = self._initialize_params(spec, params)
        except ValidationError as exc:
            raise invalid_params(describe_validation_error(exc)) from None
        if method == methods.INITIALIZE and self.role == "agent":
            self._client_capabilities(typed)
        result = await self._in_request(ctx, method, handler, typed)
        # None would reach the peer as `null`, a coroutine as an encoding error.
        return check_result(method, handler, spec.result, result, typed)

    async def _in_request(
        self, ctx: RequestContext, method: str, call: Callable[[Any], Awaitable[Any]], params: Any
    ) -> object:
        """``call(params)`` serving request ``method``: :func:`after_answer` sees ``ctx``;
        a ``ValidationError`` it raises is a :class:`HandlerBug`."""
        token = _CURRENT.set(ctx)
        try:
            return await call(params)
        except ValidationError as exc:
            raise HandlerBug(f"the {method} handler raised a ValidationError") from exc
        finally:
            _CURRENT.reset(token)

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
                logger.warning("dropped invalid %s notification: %s", method, short_error(exc))
                return
        try:
            await handler(params)
        except ValidationError as exc:
            raise HandlerBug(f"the {method} handler raised a ValidationError") from exc

    async def _unrouted_notification(self, method: str, params: object) -> None:
        """First sight of ``method``: cache its route and deliver, or say where it went."""
        spec = self._notifications.get(method)
        if spec is None or not self._allowed(spec):
            if method.startswith("_"):
                await self._ext_notification(method, params)
            elif spec is not None:
                logger.info("ignored notification %r: %s", method, self._why_not(spec))
            elif not method.startswith("$/"):
                logger.info("ignored unknown notification %r", method)
            return
        handler = await self._route(spec)
        if handler is None:
            logger.info("ignored notification %r: not implemented", method)
            return
        self._note_routes[method] = (handler, model_class(spec))
        await self.on_notification(method, params)

    def _why_not(self, spec: MethodSpec | None) -> str | None:
        """Why a known method is refused (None for an unknown one)."""
        if spec is None:
            return None
        if self._bind(spec) is not None:
            return "unstable method not enabled (the connection has unstable=False)"
        return "unstable method, not implemented by the handler"

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

    def _adapter(self, spec: MethodSpec) -> TypeAdapter[Any]:
        adapter = self._adapters.get(spec.method)
        if adapter is None:
            adapter = self._adapters[spec.method] = TypeAdapter(spec.params)
        return adapter
