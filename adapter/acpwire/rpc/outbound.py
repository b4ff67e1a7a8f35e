"""The sending half of a JSON-RPC peer: serialized writes, our answers, and our own
requests' answers.

* Writes are serialized and shielded from cancellation, so frames never interleave or
  break off half-way, and go out in call order.
* The peer's requests are answered here (:meth:`Outbox.answer_result`,
  :meth:`~Outbox.answer_error`): what cannot be encoded becomes an error answer, and an
  output already gone is logged, never raised to the handler.
* Each request we send gets a fresh integer id and a waiter; the reading side hands
  answers to :meth:`Outbox.resolve`. A request that times out or is cancelled after it
  went out is followed by ``$/cancel_request`` for its id.
* Closing fails every pending request and flushes the output, bounded in time.

Methods are plain strings and params are opaque: nothing here knows ACP.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Final

import anyio
from anyio.abc import ByteSendStream

from . import messages as m
from .errors import ConnectionClosedError, RpcError, error_from_exception

logger = logging.getLogger(__name__)
_answers_log: Final = logging.getLogger("acpwire.rpc.connection")
"""Answers log on the connection's logger, as when the connection wrote them itself."""

CANCEL_REQUEST_METHOD: Final = "$/cancel_request"
_CANCEL_SEND_TIMEOUT: Final = 5.0
_CLOSE_FLUSH_TIMEOUT: Final = 5.0


class _Waiter:
    __slots__ = ("done", "error", "result")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.result: object = None
        self.error: RpcError | None = None


class Outbox:
    """Writes frames for one connection and correlates our requests with their answers."""

    def __init__(self, send: ByteSendStream, name: str) -> None:
        self._send = send
        self._name = name
        self._write_lock = anyio.Lock(fast_acquire=True)
        self._next_id = 0
        self._pending: dict[m.RequestId, _Waiter] = {}
        self._closed = False
        self._input_ended = False
        self._reported_codes: set[int] = set()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has begun: nothing more is written."""
        return self._closed

    @property
    def ended(self) -> bool:
        """True when no request of ours can be answered any more."""
        return self._closed or self._input_ended

    def mark_input_ended(self) -> None:
        """The peer's input ended: new requests fail fast and we stop sending cancels."""
        self._input_ended = True

    async def request(self, method: str, params: object, timeout: float | None) -> object:
        """Send a request and wait for its answer (see ``Connection.request``)."""
        if self.ended:
            raise ConnectionClosedError()
        msg_id = self._next_id
        self._next_id += 1
        line = m.encode_request(msg_id, method, params)
        waiter = self._pending[msg_id] = _Waiter()
        sent = False
        try:
            await self.write(line)
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

    async def drained(self) -> None:
        """Wait until every frame written so far has left the process, when the stream
        can tell (our stdio stream can; in-memory streams deliver on send)."""
        drained = getattr(self._send, "drained", None)
        if drained is not None:
            await drained()

    async def write(self, line: bytes) -> None:
        """Write one encoded frame; :class:`ConnectionClosedError` if the output is gone."""
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

    async def answer_result(self, msg_id: m.RequestId, method: str, result: object) -> None:
        """Answer the peer's request ``msg_id`` with ``result``; a result that cannot be
        encoded is answered as the error it raised (logged)."""
        try:
            line = m.encode_result(msg_id, result)
        except Exception as exc:
            error = error_from_exception(exc, context=f"{self._name}: encoding the {method} result")
            await self.answer_error(msg_id, error)
            return
        await self._send_answer(line)

    async def answer_error(self, msg_id: m.RequestId, error: RpcError) -> None:
        """Answer the peer's request ``msg_id`` (or a line without one) with ``error``;
        error data that cannot be encoded is left out (logged)."""
        try:
            line = m.encode_error(msg_id, error)
        except Exception as exc:
            _answers_log.error(
                "%s: error data not serializable (%r); sending without it", self._name, exc
            )
            line = m.encode_error(msg_id, RpcError(error.code, error.message))
        await self._send_answer(line)

    async def _send_answer(self, line: bytes) -> None:
        try:
            await self.write(line)
        except ConnectionClosedError:
            _answers_log.warning("%s: could not answer, connection closed", self._name)

    async def _send_cancel(self, msg_id: int, method: str) -> None:
        if self.ended:
            return
        logger.debug("%s: cancelling our request %s (%s)", self._name, msg_id, method)
        with anyio.move_on_after(_CANCEL_SEND_TIMEOUT, shield=True):
            with contextlib.suppress(ConnectionClosedError):
                line = m.encode_notification(CANCEL_REQUEST_METHOD, {"requestId": msg_id})
                await self.write(line)

    def resolve(self, msg: m.Response | m.ErrorResponse) -> None:
        """Wake the request an answer belongs to; log answers that belong to none."""
        waiter = self._pending.get(msg.id)
        if waiter is None or waiter.done.is_set():
            if isinstance(msg, m.ErrorResponse) and msg.id is None:
                self._peer_error(msg.error)
            else:
                logger.warning("%s: response for unknown request id %r", self._name, msg.id)
            return
        if isinstance(msg, m.ErrorResponse):
            waiter.error = msg.error
        else:
            waiter.result = msg.result
        waiter.done.set()

    def _peer_error(self, error: RpcError) -> None:
        """An error answer without an id (a client rejecting one of our notifications):
        a warning the first time for each code, then DEBUG (some clients answer every
        notification of a kind they do not know)."""
        if error.code in self._reported_codes:
            logger.debug("%s: peer reported an error again: %s", self._name, error)
            return
        self._reported_codes.add(error.code)
        logger.warning(
            "%s: peer reported an error: %s (further errors with code %s: DEBUG)",
            self._name,
            error,
            error.code,
        )

    def fail_pending(self, detail: str | None = None) -> None:
        """Fail every request still waiting with :class:`ConnectionClosedError` (its
        message ``detail``, if given: why the connection ended)."""
        for waiter in self._pending.values():
            if not waiter.done.is_set():
                waiter.error = ConnectionClosedError(detail) if detail else ConnectionClosedError()
                waiter.done.set()

    async def close(self) -> None:
        """Stop writing, fail pending requests, let a frame in progress finish, close."""
        if self._closed:
            return
        self._closed = True
        self.fail_pending()
        with anyio.CancelScope(shield=True):
            # Let a frame in progress finish, but never wait forever on a stuck peer.
            with anyio.move_on_after(_CLOSE_FLUSH_TIMEOUT) as flush:
                async with self._write_lock:
                    await self._send.aclose()
            if flush.cancelled_caught:
                logger.warning("%s: output did not drain in time; closing anyway", self._name)
                with anyio.move_on_after(_CLOSE_FLUSH_TIMEOUT):
                    await self._send.aclose()
