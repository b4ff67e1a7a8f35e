"""One JSON-RPC 2.0 peer over a byte stream pair: correlation, cancellation, ordering.

* Each incoming request runs in its own task, so a long request never blocks others;
  ``$/cancel_request {"requestId": X}`` cancels request X, which is then answered
  ``-32800``.
* Incoming notifications run one at a time, in arrival order, on a single worker. A
  response to one of our requests goes through the same queue, so its waiter only wakes
  once every notification that arrived before it has been handled (the official SDK
  ran each message in its own task and let responses overtake updates).
* Bad input of any kind gets the right JSON-RPC error and the connection keeps serving;
  a notification (no ``id`` member) or an answer is never answered, only logged.
* The sending half (serialized writes, our answers, our requests' ids, waiters and
  cancels) is the :class:`~.outbound.Outbox`; this module is the reading half and the
  public face.

Methods are plain strings and params are opaque: nothing here knows ACP.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
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
    error_messages_default,
    log_unexpected,
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
from .outbound import CANCEL_REQUEST_METHOD, Outbox

__all__ = ["CANCEL_REQUEST_METHOD", "DEFAULT_BENIGN_PROBES", "Connection"]

logger = logging.getLogger(__name__)

DEFAULT_BENIGN_PROBES: Final = frozenset({"ping", "health", "healthcheck"})
_ORDERED_QUEUE: Final = 1024

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
        error_messages: bool | None = None,
    ) -> None:
        """``error_messages``: whether the answer to a handler's unexpected exception
        carries its (masked) message besides its type (None: ``ACPWIRE_ERROR_MESSAGES``,
        on unless ``0``)."""
        self._receive = receive
        self._error_messages = (
            error_messages_default() if error_messages is None else error_messages
        )
        self._handler = handler
        self._max_line_bytes = max_line_bytes
        self._decode = decode or m.decode_message
        self._benign_probes = benign_probes
        self._name = name
        self._out = Outbox(send, name)
        self._in_flight: dict[m.RequestId, list[anyio.CancelScope]] = {}
        self._ordered: MemoryObjectSendStream[_Ordered] | None = None
        self._worker_task: int | None = None
        self._task_group: TaskGroup | None = None
        self._started = False
        self.before_request: Callable[[str, object], None] | None = None
        """Called with each outgoing request's method and params before it is sent; what
        it raises, :meth:`request` raises (a typed layer refuses calls the peer did not
        advertise)."""
        self.after_response: Callable[[str, object], None] | None = None
        """Called with each of our requests' method and the peer's raw ``result`` when it
        comes, before :meth:`request` returns it (a typed layer reads what the peer's
        ``initialize`` answer advertises)."""
        self.describe_end: Callable[[], Awaitable[str | None]] | None = None
        """Awaited at end of input, before our pending requests fail: the message of
        their :class:`ConnectionClosedError` (a spawned agent's exit code and last words
        on stderr), and of every request made after it. None: the plain one."""
        self._end_detail: str | None = None
        self.on_input_end: Callable[[], Awaitable[None]] | None = None
        """Awaited at end of input, once the messages already received are handled and
        our pending requests have failed, before running handlers are cancelled: the
        owner winds its work down (ends turns, saves them) while handlers still run."""

    # -- outgoing ---------------------------------------------------------------------

    async def request(
        self, method: str, params: object = None, *, timeout: float | None = None
    ) -> object:
        """Send a request and return the peer's raw ``result``.

        Raises :class:`RpcError` for an error answer, :class:`ConnectionClosedError` if
        the connection ends first, and ``TimeoutError`` after ``timeout`` seconds. On
        timeout or cancellation the peer is sent ``$/cancel_request`` for this id.
        """
        if self._out.ended:
            raise ConnectionClosedError(self._end_detail or "Connection closed")
        if self.before_request is not None:
            self.before_request(method, params)
        if self._worker_task is not None and anyio.get_current_task().id == self._worker_task:
            raise RuntimeError(
                f"{method}: a notification handler cannot await a response, which is ordered "
                "after the notification being handled; start a task for it instead"
            )
        result = await self._out.request(method, params, timeout)
        if self.after_response is not None:
            self.after_response(method, result)
        return result

    async def notify(self, method: str, params: object = None) -> None:
        """Send a notification (no answer expected)."""
        await self._out.write(m.encode_notification(method, params))

    async def notify_encoded(self, method: str, params_json: bytes) -> None:
        """Send a notification whose params are already JSON (one object, no newline).

        For the hottest messages a typed layer can encode faster than a generic encoder;
        the bytes are framed as they are, so they must be valid JSON."""
        await self._out.write(m.encode_notification_raw(method, params_json))

    async def drained(self) -> None:
        """Wait until every message sent so far has been written out."""
        await self._out.drained()

    async def close(self) -> None:
        """Stop serving, fail pending requests, flush and close both streams."""
        if self._out.closed:
            return
        if self._task_group is not None:
            self._task_group.cancel_scope.cancel()
        with anyio.CancelScope(shield=True):
            await self._out.close()
            await self._receive.aclose()

    # -- incoming ---------------------------------------------------------------------

    async def serve(self) -> None:
        """Read and dispatch messages until end of stream or :meth:`close`.

        At end of stream, notifications and responses already received are still
        processed; then pending requests fail with :class:`ConnectionClosedError`,
        :attr:`on_input_end` runs, and handlers still running are cancelled.
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
                self._out.mark_input_ended()
                ordered_in.close()
                await worker_done.wait()
                if self.describe_end is not None:
                    self._end_detail = await self.describe_end()
                self._out.fail_pending(self._end_detail)  # nothing can answer them now
                if self.on_input_end is not None:
                    await self.on_input_end()
                tg.cancel_scope.cancel()
        finally:
            self._out.mark_input_ended()
            ordered_in.close()
            self._out.fail_pending()

    async def _read_loop(self) -> None:
        reader = LineReader(self._receive, self._max_line_bytes)
        try:
            async for line in reader:
                if isinstance(line, OversizedLine):
                    await self._oversized(line)
                    continue
                await self._dispatch(self._decode_line(line), line)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            logger.info("%s: input stream closed: %r", self._name, exc)

    async def _oversized(self, line: OversizedLine) -> None:
        """A line too long to read: the request it carried fails at once (answered with
        its id when the line's start tells it); a response fails our request it answers."""
        msg_id, is_response = m.leading_id(line.head)
        logger.warning("%s: dropped a %s (id %r)", self._name, line.describe(), msg_id)
        if is_response and msg_id is not None:
            error = RpcError(INVALID_REQUEST, f"the peer's answer was too long: {line.describe()}")
            self._out.resolve(m.ErrorResponse(msg_id, error))
            return
        await self._out.answer_error(
            msg_id, RpcError(INVALID_REQUEST, f"Invalid request: {line.describe()}")
        )

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
            unanswered = "" if msg.reply else " (not answered: a notification or an answer)"
            logger.warning(
                "%s: %s%s; message: %s", self._name, msg.error.message, unanswered, preview(line)
            )
            if msg.reply:
                await self._out.answer_error(msg.id, msg.error)
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
                    outcome = request_failure(
                        self._name,
                        req.method,
                        exc,
                        self._benign_probes,
                        messages=self._error_messages,
                    )
        finally:
            scopes = self._in_flight.get(req.id, [])
            scopes.remove(scope)
            if not scopes:
                self._in_flight.pop(req.id, None)
        if outcome is None:  # our scope swallowed a $/cancel_request cancellation
            logger.debug("%s: request %r (%s) cancelled by peer", self._name, req.id, req.method)
            outcome = request_cancelled()
        if isinstance(outcome, RpcError):
            await self._out.answer_error(req.id, outcome)
            return
        await self._out.answer_result(req.id, req.method, outcome[0])
        if ctx.after_answer:
            # Written, not just queued: the callbacks' own work (building the next
            # notifications) would otherwise keep the writer waiting for the loop.
            await self.drained()
        for callback in ctx.after_answer:
            try:
                await callback()
            except Exception as exc:
                log_unexpected(f"{self._name}: after-answer callback of {req.method}", exc)

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
                    self._out.resolve(item)
        done.set()

    async def _handle_notification(self, note: m.Notification) -> None:
        try:
            await self._handler.on_notification(note.method, note.params)
        except Exception as exc:
            report_notification_failure(self._name, note.method, exc, self._benign_probes)
