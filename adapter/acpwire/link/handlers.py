"""What a handler object may define, checked when it is bound to a connection.

A handler answers the protocol methods of its role through methods named after them
(``session/prompt`` -> ``session_prompt``; the names of ``acp_v1.interfaces.Agent`` and
``Client``) and extension methods through the :func:`ext_method` and
:func:`ext_notification` decorators, which name the wire method, leading underscore
included. :func:`check_handler` runs when a handler is bound: an ``async`` method whose
name is close to a protocol method (``session_promt``), is the official SDK's name for
one (``prompt``, ``new_session``) or belongs to the other role (``session_update`` on an
agent) raises :class:`HandlerError` with the name meant, instead of answering -32601
when the peer calls it. So does a ``Client`` bound as an agent, or the reverse.

It also says what else an endpoint hands calls to: an :class:`ExtensionHandler` hook,
a handler that is :class:`RetiredMethods`, and :class:`ExtensionCalls`, the routing of
``_``-prefixed methods and notifications to the decorated methods (mixed into
:class:`~acpwire.link.endpoint.AcpEndpoint`). A ``ValidationError`` raised by handler code
is a :class:`HandlerBug`.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal, Protocol, TypeVar, get_type_hints, runtime_checkable

from pydantic import TypeAdapter, ValidationError

from acp_v1 import DECODE, interfaces, methods
from acpwire.rpc import RequestContext, invalid_params, method_not_found
from acpwire.rpc.errors import HandlerBug, describe_validation_error, mistake

__all__ = [
    "CapabilityError",
    "ExtensionHandler",
    "ExtensionRoute",
    "HandlerBug",
    "HandlerError",
    "RetiredMethods",
    "check_handler",
    "check_result",
    "ext_method",
    "ext_notification",
    "extension_routes",
]

Role = Literal["agent", "client"]
F = TypeVar("F", bound=Callable[..., Awaitable[Any]])

_MARK: Final = "__acpwire_extension__"
_INTERFACES: Final = {"agent": interfaces.Agent, "client": interfaces.Client}
_HOOKS: Final = frozenset({"ext_method", "ext_notification", "retired_method"})
_SDK_NAMES: Final[dict[Role, dict[str, str]]] = {
    "agent": {
        "prompt": "session_prompt",
        "cancel": "session_cancel",
        "new_session": "session_new",
        "load_session": "session_load",
        "list_sessions": "session_list",
        "fork_session": "session_fork",
        "resume_session": "session_resume",
        "close_session": "session_close",
        "set_session_mode": "session_set_mode",
        "set_config_option": "session_set_config_option",
    },
    "client": {
        "request_permission": "session_request_permission",
        "read_text_file": "fs_read_text_file",
        "write_text_file": "fs_write_text_file",
        "create_terminal": "terminal_create",
        "release_terminal": "terminal_release",
        "wait_for_terminal_exit": "terminal_wait_for_exit",
        "kill_terminal": "terminal_kill",
    },
}


class HandlerError(TypeError):
    """A handler object does not fit the role it is bound to (raised at bind time)."""


class CapabilityError(RuntimeError):
    """A call to a method the peer did not advertise in ``initialize`` (an agent calling
    ``fs/read_text_file`` on a client without ``fs.readTextFile``): raised by the call,
    before anything is sent."""


class ExtensionHandler(Protocol):
    """Receives the ``_``-prefixed methods and notifications (by wire name, underscore
    included) that the handler object has no decorated method for."""

    async def ext_method(self, method: str, params: object) -> object: ...
    async def ext_notification(self, method: str, params: object) -> None: ...


@runtime_checkable
class RetiredMethods(Protocol):
    """A handler that still answers requests for methods the protocol has removed (and
    some clients still send); it raises ``method_not_found`` for the rest."""

    async def retired_method(self, method: str, params: object) -> object: ...


def _mark(method: str, kind: Literal["request", "notification"]) -> Callable[[F], F]:
    if not method.startswith("_"):
        raise ValueError(f"extension method names start with '_': {method!r}")

    def decorate(func: F) -> F:
        if not inspect.iscoroutinefunction(inspect.unwrap(func)):
            name = getattr(func, "__name__", "handler")
            decorator = "ext_method" if kind == "request" else "ext_notification"
            raise TypeError(
                f"@{decorator}({method!r}) on {getattr(func, '__qualname__', name)}, which "
                f"is not async: write async def {name}"
            )
        setattr(func, _MARK, (method, kind))
        return func

    return decorate


def ext_method(method: str) -> Callable[[F], F]:
    """Mark a handler's ``async`` method as the handler of extension request ``method``
    (the wire name, such as ``"_vendor.example/status"``). Its parameter's annotation, a
    model or any type pydantic validates, types the params (``object``: raw JSON; invalid
    params answer -32602); its return value is the result."""
    return _mark(method, "request")


def ext_notification(method: str) -> Callable[[F], F]:
    """Like :func:`ext_method`, for the extension notification ``method``."""
    return _mark(method, "notification")


class ExtensionRoute:
    """A handler method bound to one extension method; ``params`` validates the raw
    params (None hands them over as they are)."""

    __slots__ = ("call", "kind", "method", "params")

    def __init__(
        self,
        method: str,
        kind: Literal["request", "notification"],
        call: Callable[[Any], Awaitable[Any]],
        params: TypeAdapter[Any] | None,
    ) -> None:
        self.method = method
        self.kind = kind
        self.call = call
        self.params = params


def extension_routes(handler: object) -> dict[str, ExtensionRoute]:
    """The extension methods ``handler`` defines with the decorators, by wire name."""
    routes: dict[str, ExtensionRoute] = {}
    for name, func in inspect.getmembers(type(handler), inspect.iscoroutinefunction):
        mark = getattr(func, _MARK, None)
        if mark is None:
            continue
        method, kind = mark
        if method in routes:
            raise HandlerError(f"{type(handler).__name__}: two handlers for {method!r}")
        routes[method] = ExtensionRoute(method, kind, getattr(handler, name), _params(func))
    return routes


class ExtensionCalls:
    """The ``_``-prefixed methods and notifications of an endpoint (mixed into
    :class:`~acpwire.link.endpoint.AcpEndpoint`, which sets the attributes below): to the
    bound handler's decorated method for it, else to the ``extensions`` hook; without
    either a request answers -32601 and a notification is ignored."""

    _ext_routes: dict[str, ExtensionRoute]
    _extensions: ExtensionHandler | None

    async def _in_request(
        self, ctx: RequestContext, method: str, call: Callable[[Any], Awaitable[Any]], params: Any
    ) -> object:
        raise NotImplementedError

    def _ext_params(self, route: ExtensionRoute, params: object) -> object:
        if route.params is None:
            return params
        return route.params.validate_python(params, context=DECODE)

    async def _ext_request(self, method: str, params: object, ctx: RequestContext) -> object:
        route = self._ext_routes.get(method)
        if route is None or route.kind != "request":
            if self._extensions is None:
                raise method_not_found(method)
            return await self._extensions.ext_method(method, params)
        try:
            typed = self._ext_params(route, params)
        except ValidationError as exc:
            raise invalid_params(describe_validation_error(exc)) from None
        result = await self._in_request(ctx, method, route.call, typed)
        return check_result(method, route.call, None, result, typed)

    async def _ext_notification(self, method: str, params: object) -> None:
        route = self._ext_routes.get(method)
        if route is None or route.kind != "notification":
            if self._extensions is not None:
                await self._extensions.ext_notification(method, params)
            else:
                _endpoint_log.info("ignored extension notification %r: no handler", method)
            return
        try:
            typed = self._ext_params(route, params)
        except ValidationError as exc:
            _endpoint_log.warning("dropped invalid %s notification: %s", method, short_error(exc))
            return
        try:
            await route.call(typed)
        except ValidationError as exc:
            raise HandlerBug(f"the {method} handler raised a ValidationError") from exc


_endpoint_log: Final = logging.getLogger("acpwire.link.endpoint")
"""The endpoint's logger: what it routes here logs as it did before the routing moved."""


def short_error(exc: ValidationError) -> str:
    """The first error of ``exc`` as ``loc: msg``, for a log line."""
    first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": str(exc)}
    return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"


def _params(func: Callable[..., Any]) -> TypeAdapter[Any] | None:
    names = list(inspect.signature(func).parameters)
    if len(names) != 2:
        raise HandlerError(f"{func.__qualname__}: an extension handler takes (self, params)")
    hint = get_type_hints(func).get(names[1], object)
    return None if hint in (object, Any) else TypeAdapter(hint)


def _names(role: Role) -> frozenset[str]:
    specs = (methods.AGENT_REQUESTS, methods.AGENT_NOTIFICATIONS)
    if role == "client":
        specs = (methods.CLIENT_REQUESTS, methods.CLIENT_NOTIFICATIONS)
    return frozenset(spec.handler for table in specs for spec in table.values())


_CHECKED: set[tuple[Role, type]] = set()


def check_handler(role: Role, handler: object) -> None:
    """Raise :class:`HandlerError` when ``handler`` does not fit ``role`` (see the module
    docstring); each class is checked once."""
    cls = type(handler)
    if (role, cls) in _CHECKED:
        return
    other: Role = "client" if role == "agent" else "agent"
    if isinstance(handler, _INTERFACES[other]) and not isinstance(handler, _INTERFACES[role]):
        raise HandlerError(
            f"{cls.__name__} is an ACP {other} ({_INTERFACES[other].__name__}); "
            f"it cannot be bound as the {role}"
        )
    own, theirs = _names(role), _names(other) - _names(role)
    sdk = _SDK_NAMES[role]
    problems = []
    for name, func in inspect.getmembers(cls, inspect.isfunction):
        if name in own and not inspect.iscoroutinefunction(func):
            problems.append(f"{name} is not async: write async def {name}")
    for name, func in inspect.getmembers(cls, inspect.iscoroutinefunction):
        if name.startswith("_") or name in own or name in _HOOKS or hasattr(func, _MARK):
            continue
        if name in sdk:
            problems.append(f"{name} is the official SDK's name; acpwire calls {sdk[name]}")
        elif name in theirs:
            problems.append(f"{name} is a method of the {other}, not of the {role}")
        else:
            import difflib  # only for a handler with unknown async methods

            close = difflib.get_close_matches(name, sorted(own | set(sdk)), n=1, cutoff=0.85)
            if close:
                meant = sdk.get(close[0], close[0])
                problems.append(f"{name} is no ACP {role} method; did you mean {meant}?")
    if problems:
        raise HandlerError(f"{cls.__name__} bound as the {role}: " + "; ".join(problems))
    _CHECKED.add((role, cls))


def check_result(
    method: str, call: Callable[..., Any], expected: Any, result: object, params: object
) -> object:
    """``result``, what the handler method ``call`` returned for the request ``method``,
    if it is one: a :class:`TypeError` naming what came and what is expected for None, a
    coroutine (a forgotten ``await``) or another type than ``expected`` (the result model;
    None: any JSON data, an extension's), a :class:`ValueError` for a permission answer
    choosing an option that was not offered."""
    permission = method == methods.SESSION_REQUEST_PERMISSION
    if isinstance(expected, type) and isinstance(result, expected) and not permission:
        return result  # every well-behaved answer: nothing more to look at
    label = _label(call)
    want = f"a {expected.__name__}" if isinstance(expected, type) else "a result"
    if inspect.isawaitable(result):
        what = "an awaitable"
        if inspect.iscoroutine(result):
            what = f"the coroutine {result.__qualname__}()"
            result.close()  # never awaited, and no warning about it: the error says so
        raise mistake(
            TypeError(f"{method}: {label} returned {what} instead of {want}: did you forget await?")
        )
    if result is None:
        hint = f": return m.{expected.__name__}(...)" if isinstance(expected, type) else ""
        raise mistake(
            TypeError(
                f"{method}: {label} returned None, expected {want} (a request always has one){hint}"
            )
        )
    if isinstance(expected, type) and not isinstance(result, expected):
        if not isinstance(result, dict):
            raise mistake(
                TypeError(
                    f"{method}: {label} returned {type(result).__name__}, expected {want} "
                    f"(acp_v1.models.{expected.__name__})"
                )
            )
        adapter = _RESULT_ADAPTERS.get(expected)
        if adapter is None:
            adapter = _RESULT_ADAPTERS[expected] = TypeAdapter(expected)
        try:  # JSON data is fine when it is what the model says
            adapter.validate_python(result, context=DECODE)
        except ValidationError as exc:
            raise mistake(
                TypeError(
                    f"{method}: {label} returned a dict that is not {want}: {short_error(exc)}"
                )
            ) from None
    if permission:
        _check_option(label, result, params)
    return result


_RESULT_ADAPTERS: dict[type, TypeAdapter[Any]] = {}


def _label(call: Callable[..., Any]) -> str:
    owner = getattr(call, "__self__", None)
    name = getattr(call, "__name__", repr(call))
    return f"{type(owner).__name__}.{name}" if owner is not None else name


def _check_option(label: str, result: object, params: object) -> None:
    """A selected option must be one of those offered."""
    if isinstance(result, dict):
        outcome = result.get("outcome")
        chosen = outcome.get("optionId") if isinstance(outcome, dict) else None
    else:
        chosen = getattr(getattr(result, "outcome", None), "option_id", None)
    offered = [getattr(option, "option_id", None) for option in getattr(params, "options", [])]
    if isinstance(chosen, str) and offered and chosen not in offered:
        raise mistake(
            ValueError(
                f"session/request_permission: {label} chose option_id {chosen!r}, which was not "
                f"offered ({', '.join(str(o) for o in offered)}): answer with the option_id of "
                "one of params.options"
            )
        )
