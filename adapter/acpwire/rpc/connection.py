"""One JSON-RPC 2.0 peer over a byte stream pair: correlation, cancellation, ordering.

* Each incoming request runs in its own task, so a long request never blocks others;
  ``$/cancel_request {"requestId": X}`` cancels request X, which is then answered
  ``-32800``.
* Incoming notifications run one at a time, in arrival order, on a single worker. A
  response to one of our requests goes through the same queue, so its waiter only wakes
  once every notification that arrived before it has been handled (the official SDK
  ran each message in its own task and let responses overtake updates).
* Bad input of any kind gets the right JSON-RPC error and the connection keeps serving.
* Writes are serialized and shielded from cancellation, so frames never interleave or
  break off half-way, and go out in call order.

Methods are plain strings and params are opaque: nothing here knows ACP.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Final

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from . import messages as m
from .errors import (
    INVALID_REQUEST,
    ConnectionClosedError,
    RpcError,
    error_from_exception,
    request_cancelled,
)
from .framing import DEFAULT_MAX_LINE_BYTES, LineReader, OversizedLine
from .handling import (
    RequestContext,
    RpcHandler,
    cancel_target,
    preview,
    report_notification_failure,
    request_failure,
)

logger = logging.getLogger(__name__)

CANCEL_REQUEST_METHOD: Final = "$/cancel_request"
DEFAULT_BENIGN_PROBES: Final = frozenset({"ping", "health", "healthcheck"})
_ORDERED_QUEUE: Final = 1024
_CANCEL_SEND_TIMEOUT: Final = 5.0
_CLOSE_FLUSH_TIMEOUT: Final = 5.0


class _Waiter:
    __slots__ = ("done", "error", "result")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.result: object = None
        self.error: RpcError | None = None


_Ordered = m.Notification | m.Response | m.ErrorResponse


class Connection:
    """A JSON-RPC peer; run :meth:`serve` in a task, then call :meth:`request`/:meth:`notify`."""

    def __init__(
        self,
        receive: ByteReceiveStream,
        send: ByteSendStream,
        handler: RpcHandler,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        decode: m.Decoder | None = None,
        benign_probes: frozenset[str] = DEFAULT_BENIGN_PROBES,
        name: str = "rpc",
    ) -> None:
        self._receive = receive
        self._send = send
        self._handler = handler
        self._max_line_bytes = max_line_bytes
        self._decode = decode or m.decode_message
        self._benign_probes = benign_probes
        self._name = name
        self._write_lock = anyio.Lock(fast_acquire=True)
        self._next_id = 0
        self._pending: dict[m.RequestId, _Waiter] = {}
        self._in_flight: dict[m.RequestId, list[anyio.CancelScope]] = {}
        self._ordered: MemoryObjectSendStream[_Ordered] | None = None
        self._worker_task: int | None = None
        self._task_group: TaskGroup | None = None
        self._started = False
        self._receive_closed = False
        self._closed = False

    # -- outgoing ---------------------------------------------------------------------

    async def request(
        self, method: str, params: object = None, *, timeout: float | None = None
    ) -> object:
        """Send a request and return the peer's raw ``result``.

        Raises :class:`RpcError` for an error answer, :class:`ConnectionClosedError` if
        the connection ends first, and ``TimeoutError`` after ``timeout`` seconds. On
        timeout or cancellation the peer is sent ``$/cancel_request`` for this id.
        """
        if self._closed or self._receive_closed:
            raise ConnectionClosedError()
        if self._worker_task is not None and anyio.get_current_task().id == self._worker_task:
            raise RuntimeError(
                f"{method}: a notification handler cannot await a response, which is ordered "
                "after the notification being handled; start a task for it instead"
            )
        msg_id = self._next_id
        self._next_id += 1
        line = m.encode_request(msg_id, method, params)
        waiter = self._pending[msg_id] = _Waiter()
        sent = False
        try:
            await self._write(line)
            sent = True
            with anyio.fail_after(timeout):
                await waiter.done.wait()
        except BaseException:
            if sent and not waiter.done.is_set():
                await self._send_cancel(msg_id, method)
            raise
        finally:
            del self._pending[msg_id]
        if waiter.error is not None:
            raise waiter.error
        return waiter.result

    async def notify(self, method: str, params: object = None) -> None:
        """Send a notification (no answer expected)."""
        await self._write(m.encode_notification(method, params))

    async def notify_encoded(self, method: str, params_json: bytes) -> None:
        """Send a notification whose params are already JSON (one object, no newline).

        For the hottest messages a typed layer can encode faster than a generic encoder;
        the bytes are framed as they are, so they must be valid JSON."""
        await self._write(m.encode_notification_raw(method, params_json))

    async def close(self) -> None:
        """Stop serving, fail pending requests, flush and close both streams."""
        if self._closed:
            return
        self._closed = True
        if self._task_group is not None:
            self._task_group.cancel_scope.cancel()
        self._fail_pending()
        with anyio.CancelScope(shield=True):
            # Let a frame in progress finish, but never wait forever on a stuck peer.
            with anyio.move_on_after(_CLOSE_FLUSH_TIMEOUT) as flush:
                async with self._write_lock:
                    await self._send.aclose()
            if flush.cancelled_caught:
                logger.warning("%s: output did not drain in time; closing anyway", self._name)
                with anyio.move_on_after(_CLOSE_FLUSH_TIMEOUT):
                    await self._send.aclose()
            await self._receive.aclose()

    async def _write(self, line: bytes) -> None:
        if self._closed:
            raise ConnectionClosedError()
        lock = self._write_lock
        if not lock.locked():
            # Uncontended (the streaming hot path): our transports either queue the
            # whole frame or wait before queuing any of it, so no shield is needed.
            lock.acquire_nowait()
            try:
                await self._send.send(line)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                raise ConnectionClosedError(f"Connection closed: {exc!r}") from exc
            finally:
                lock.release()
            return
        # Shielded: a frame cut off half-way would corrupt every later message.
        with anyio.CancelScope(shield=True):
            async with self._write_lock:
                try:
                    await self._send.send(line)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                    raise ConnectionClosedError(f"Connection closed: {exc!r}") from exc

    async def _send_cancel(self, msg_id: int, method: str) -> None:
        if self._closed or self._receive_closed:
            return
        logger.debug("%s: cancelling our request %s (%s)", self._name, msg_id, method)
        with anyio.move_on_after(_CANCEL_SEND_TIMEOUT, shield=True):
            with contextlib.suppress(ConnectionClosedError):
                await self.notify(CANCEL_REQUEST_METHOD, {"requestId": msg_id})

    def _fail_pending(self) -> None:
        for waiter in self._pending.values():
            if not waiter.done.is_set():
                waiter.error = ConnectionClosedError()
                waiter.done.set()

    # -- incoming ---------------------------------------------------------------------

    async def serve(self) -> None:
        """Read and dispatch messages until end of stream or :meth:`close`.

        At end of stream, notifications and responses already received are still
        processed; then pending requests fail with :class:`ConnectionClosedError` and
        handlers still running are cancelled.
        """
        if self._started:
            raise RuntimeError("serve() can only run once per connection")
        self._started = True
        ordered_in, ordered_out = anyio.create_memory_object_stream[_Ordered](_ORDERED_QUEUE)
        self._ordered = ordered_in
        worker_done = anyio.Event()
        try:
            async with anyio.create_task_group() as tg:
                self._task_group = tg
                tg.start_soon(self._ordered_worker, ordered_out, worker_done)
                await self._read_loop()
                logger.debug("%s: end of input", self._name)
                self._receive_closed = True
                ordered_in.close()
                await worker_done.wait()
                tg.cancel_scope.cancel()
        finally:
            self._receive_closed = True
            ordered_in.close()
            self._fail_pending()

    async def _read_loop(self) -> None:
        reader = LineReader(self._receive, self._max_line_bytes)
        try:
            async for line in reader:
                if isinstance(line, OversizedLine):
                    logger.warning("%s: dropped a %s", self._name, line.describe())
                    msg = RpcError(INVALID_REQUEST, f"Invalid request: {line.describe()}")
                    await self._answer_error(None, msg)
                    continue
                await self._dispatch(self._decode_line(line), line)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            logger.info("%s: input stream closed: %r", self._name, exc)

    def _decode_line(self, line: bytes) -> m.Incoming:
        try:
            return self._decode(line)
        except Exception as exc:
            # The decoder should return InvalidMessage; a raise is a decoder bug.
            error = error_from_exception(exc, context=f"{self._name}: decoding a message")
            return m.InvalidMessage(error)

    async def _dispatch(self, msg: m.Incoming, line: bytes) -> None:
        if isinstance(msg, m.Request):
            self._start_request(msg)
        elif isinstance(msg, m.Notification) and msg.method == CANCEL_REQUEST_METHOD:
            self._cancel_incoming(msg.params)
        elif isinstance(msg, m.InvalidMessage):
            logger.warning("%s: %s; message: %s", self._name, msg.error.message, preview(line))
            if msg.reply:
                await self._answer_error(msg.id, msg.error)
        elif self._ordered is not None:
            try:  # no scheduling round per message unless the worker is behind
                self._ordered.send_nowait(msg)
            except anyio.WouldBlock:
                await self._ordered.send(msg)

    def _start_request(self, req: m.Request) -> None:
        if self._task_group is None:
            return
        # The scope exists before the task starts, so a $/cancel_request that arrives
        # right behind the request still finds it.
        scope = anyio.CancelScope()
        self._in_flight.setdefault(req.id, []).append(scope)
        self._task_group.start_soon(self._run_request, req, scope)

    async def _run_request(self, req: m.Request, scope: anyio.CancelScope) -> None:
        ctx = RequestContext(req.id, req.method, self)
        outcome: tuple[object] | RpcError | None = None
        try:
            with scope:
                try:
                    outcome = (await self._handler.on_request(req.method, req.params, ctx),)
                except Exception as exc:
                    outcome = request_failure(self._name, req.method, exc, self._benign_probes)
        finally:
            scopes = self._in_flight.get(req.id, [])
            scopes.remove(scope)
            if not scopes:
                self._in_flight.pop(req.id, None)
        if outcome is None:  # our scope swallowed a $/cancel_request cancellation
            logger.debug("%s: request %r (%s) cancelled by peer", self._name, req.id, req.method)
            outcome = request_cancelled()
        if isinstance(outcome, RpcError):
            await self._answer_error(req.id, outcome)
            return
        await self._answer_result(req.id, req.method, outcome[0])
        for callback in ctx.after_answer:
            try:
                await callback()
            except Exception:
                logger.exception("%s: after-answer callback of %s failed", self._name, req.method)

    def _cancel_incoming(self, params: object) -> None:
        target = cancel_target(params)
        if target is None:
            logger.warning(
                "%s: ignoring malformed %s %r", self._name, CANCEL_REQUEST_METHOD, params
            )
            return
        request_id = target[0]
        scopes = self._in_flight.get(request_id)
        if not scopes:
            logger.debug("%s: cancel for request %r, not in flight", self._name, request_id)
            return
        for scope in scopes:
            scope.cancel()

    async def _ordered_worker(
        self, items: MemoryObjectReceiveStream[_Ordered], done: anyio.Event
    ) -> None:
        self._worker_task = anyio.get_current_task().id
        async with items:
            while True:
                try:
                    item = items.receive_nowait()
                except anyio.WouldBlock:
                    try:
                        item = await items.receive()
                    except anyio.EndOfStream:
                        break
                except anyio.EndOfStream:
                    break
                if isinstance(item, m.Notification):
                    await self._handle_notification(item)
                else:
                    self._resolve(item)
        done.set()

    async def _handle_notification(self, note: m.Notification) -> None:
        try:
            await self._handler.on_notification(note.method, note.params)
        except Exception as exc:
            report_notification_failure(self._name, note.method, exc, self._benign_probes)

    def _resolve(self, msg: m.Response | m.ErrorResponse) -> None:
        waiter = self._pending.get(msg.id)
        if waiter is None or waiter.done.is_set():
            if isinstance(msg, m.ErrorResponse) and msg.id is None:
                logger.warning("%s: peer reported an error: %s", self._name, msg.error)
            else:
                logger.warning("%s: response for unknown request id %r", self._name, msg.id)
            return
        if isinstance(msg, m.ErrorResponse):
            waiter.error = msg.error
        else:
            waiter.result = msg.result
        waiter.done.set()

    async def _answer_result(self, msg_id: m.RequestId, method: str, result: object) -> None:
        try:
            line = m.encode_result(msg_id, result)
        except Exception as exc:
            error = error_from_exception(exc, context=f"{self._name}: encoding the {method} result")
            await self._answer_error(msg_id, error)
            return
        await self._send_answer(line)

    async def _answer_error(self, msg_id: m.RequestId, error: RpcError) -> None:
        try:
            line = m.encode_error(msg_id, error)
        except Exception as exc:
            logger.error(
                "%s: error data not serializable (%r); sending without it", self._name, exc
            )
            line = m.encode_error(msg_id, RpcError(error.code, error.message))
        await self._send_answer(line)

    async def _send_answer(self, line: bytes) -> None:
        try:
            await self._write(line)
        except ConnectionClosedError:
            logger.warning("%s: could not answer, connection closed", self._name)
