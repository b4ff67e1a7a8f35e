"""The turn bridge: the agent's worker-thread callbacks become ordered ``session/update``s.

The agent thread never waits for the editor to read an update: callbacks append items to
an unbounded queue and return, waking the event loop only when it is not already due to
collect them. One pump task on the event loop sends them in order. Text and thought
deltas that pile up while the client is slow are coalesced into one chunk (joined, never
reordered or dropped). Calls that need an answer (approvals, reading a file through the
editor) travel through the same queue, so they reach the client after every update that
preceded them; the agent thread blocks on a future for the answer. A pending approval is
abandoned (and refused) as soon as the turn is cancelled, and any call still pending
when the turn is over is abandoned too, so an editor that never answers cannot hold up
the ``session/prompt`` answer.

Every tool call started in the turn gets a terminal ``tool_call_update``: the agent's own
end event, or, for calls still open when the turn ends, a ``failed`` one from
:meth:`TurnBridge.close_open_calls`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, cast, get_args

import anyio

from acpwire.agent.seam import (
    AccessProposal,
    ApprovalAnswer,
    CommandPlan,
    CommandProposal,
    EditorRefused,
    EditProposal,
    PlanItem,
    ToolEnd,
    ToolStart,
)
from acpwire.approval.messages import refusal_message
from acpwire.fastpath import ChunkKind
from acpwire.render import end_update, plan_update, start_update, text_content

from .editor_errors import no_answer

logger = logging.getLogger(__name__)

_TEXT, _THOUGHT = "text", "thought"


class TurnServices(Protocol):
    """Loop-side services one turn needs (implemented by the backend per session)."""

    async def send(self, update: Any) -> None: ...
    async def send_text(self, text: str, kind: ChunkKind) -> None: ...
    async def approve_edits(
        self, call_id: str, proposals: list[EditProposal]
    ) -> tuple[bool, str | None]: ...
    async def approve_command(
        self, call_id: str | None, proposal: CommandProposal
    ) -> tuple[ApprovalAnswer, str | None]: ...
    async def approve_access(self, call_id: str, proposal: AccessProposal) -> str | None: ...
    async def read_file(self, path: str) -> str | EditorRefused | None: ...
    async def write_file(self, path: str, content: str) -> bool | EditorRefused: ...
    async def rotated(self, new_id: str, reason: str) -> None: ...
    async def run_command(
        self, call_id: str, command: str, cwd: str, timeout: float, plan: CommandPlan
    ) -> tuple[int, str] | EditorRefused | None: ...
    def plan_command(
        self, command: str, cwd: str, *, sandbox: str, justification: str
    ) -> CommandPlan:
        """Thread-safe and synchronous: called on the agent's thread."""
        ...


@dataclass(slots=True)
class _Call:
    run: Callable[[], Awaitable[Any]]
    future: concurrent.futures.Future[Any]
    aborted: Any = None
    """The answer when the call is abandoned."""
    awaited: bool = True
    """The agent thread waits for the answer: abandon the call once the turn is over."""
    on_cancel: bool = False
    """Abandon the call as soon as the turn is cancelled (approvals: a cancel refuses)."""


_END = object()
_ANSWERS = frozenset(get_args(ApprovalAnswer))


class TurnBridge:
    """``TurnHooks`` for one turn of one session."""

    def __init__(self, services: TurnServices, *, cwd: str, call_timeout: float) -> None:
        self._services = services
        self._cwd = cwd
        self._call_timeout = call_timeout
        self._loop = asyncio.get_running_loop()
        self._send, self._receive = anyio.create_memory_object_stream[Any](float("inf"))
        self._inbox: deque[object] = deque()  # thread side -> _drain (appends are atomic)
        self._wake_lock = threading.Lock()
        self._wake_pending = False
        self._open: dict[str, ToolStart] = {}
        self._proposals: dict[str, list[EditProposal]] = {}
        self._notes: dict[str, str] = {}
        self._local = threading.local()
        self._closed = False
        self._cancelled = False
        self._current: tuple[anyio.CancelScope, _Call] | None = None

    # -- thread side -----------------------------------------------------------------

    def _put(self, item: object) -> None:
        """Queue ``item`` for the pump; wakes the event loop only when no wake-up is
        pending already (a streamed token is one append, not one loop round trip)."""
        if self._closed:
            return
        self._inbox.append(item)
        with self._wake_lock:
            if self._wake_pending:
                return
            self._wake_pending = True
        try:
            self._loop.call_soon_threadsafe(self._drain)
        except RuntimeError:  # the event loop is closed: a worker abandoned at shutdown
            logger.debug("turn bridge: event loop closed; dropped %r", item)

    def _drain(self) -> None:
        """On the loop: move everything the threads queued to the pump, in order."""
        with self._wake_lock:
            self._wake_pending = False  # an item appended from now on wakes us again
        inbox, send = self._inbox, self._send.send_nowait
        while inbox:
            send(inbox.popleft())

    def _ask(
        self,
        run: Callable[[], Awaitable[Any]],
        default: Any,
        *,
        refusal: Any = None,
        timeout: float | None = None,
    ) -> Any:
        """Run ``run`` on the loop and wait (``timeout``) for its answer; ``default`` on
        failure. An approval passes its ``refusal``: the answer when the turn is cancelled
        (or over) before the editor answered.
        """
        if self._closed:
            return default
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        if refusal is None:
            self._put(_Call(run, future, default))
        else:
            self._put(_Call(run, future, refusal, on_cancel=True))
        try:
            return future.result(timeout=timeout or self._call_timeout)
        except Exception as exc:  # timeouts and client failures answer the safe default
            logger.warning("turn bridge call failed (%s); using %r", exc, default)
            future.cancel()
            self._abandon(future)
            return default

    def _abandon(self, future: concurrent.futures.Future[Any]) -> None:
        """Nobody waits for ``future`` any more: stop its editor request if it is the one
        running, so an editor that never answers does not hold up the updates behind it."""

        def stop() -> None:
            if self._current is not None and self._current[1].future is future:
                self._current[0].cancel()

        with contextlib.suppress(RuntimeError):  # RuntimeError: the event loop is closed
            self._loop.call_soon_threadsafe(stop)

    def on_text_delta(self, text: str) -> None:
        if text:
            self._put((_TEXT, text))

    def on_thought_delta(self, text: str) -> None:
        if text:
            self._put((_THOUGHT, text))

    def on_tool_start(self, start: ToolStart) -> None:
        self._open[start.call_id] = start
        self._local.call_id = start.call_id
        self._put(("start", start))

    def on_tool_end(self, end: ToolEnd) -> None:
        if self._open.pop(end.call_id, None) is None:
            logger.warning("tool end for %s without a start", end.call_id)
        self._put(("end", end))

    def on_plan(self, items: list[PlanItem]) -> None:
        self._put(("update", plan_update(items)))

    def on_internal_session_id(self, new_id: str, reason: str) -> None:
        rotated = _Call(
            lambda: self._services.rotated(new_id, reason),
            concurrent.futures.Future(),
            awaited=False,
        )
        self._put(rotated)

    def approve_command(self, proposal: CommandProposal) -> ApprovalAnswer:
        call_id = getattr(self._local, "call_id", None)
        answer, note = self._ask(
            lambda: self._services.approve_command(call_id, proposal),
            ("deny", "approval failed"),
            refusal=("deny", refusal_message("cancelled", subject="command")),
        )
        if note and call_id:
            self._notes[call_id] = note
        return cast(ApprovalAnswer, answer) if answer in _ANSWERS else "deny"

    def approve_edits(self, call_id: str, proposals: list[EditProposal]) -> bool:
        self._proposals[call_id] = proposals
        approved, note = self._ask(
            lambda: self._services.approve_edits(call_id, proposals),
            (False, "approval failed"),
            refusal=(False, refusal_message("cancelled", subject="edit")),
        )
        if note:
            self._notes[call_id] = note
        return bool(approved)

    def approve_access(self, call_id: str, proposal: AccessProposal) -> str | None:
        refused = refusal_message("cancelled", subject=proposal.kind)
        answer = self._ask(
            lambda: self._services.approve_access(call_id, proposal),
            refusal_message("invalid", subject=proposal.kind),
            refusal=refused,
        )
        return answer if isinstance(answer, str) or answer is None else refused

    # An editor that offers fs or terminals and does not answer (timeout, turn over) has
    # not said yes: these fail (EditorRefused) rather than fall back to the disk.
    def read_text_file(self, path: str) -> str | None:
        result = self._ask(lambda: self._services.read_file(path), no_answer(f"read {path}"))
        if isinstance(result, EditorRefused):
            raise result
        return result if isinstance(result, str) else None

    def write_text_file(self, path: str, content: str) -> bool:
        result = self._ask(
            lambda: self._services.write_file(path, content), no_answer(f"write {path}")
        )
        if isinstance(result, EditorRefused):
            raise result
        return result is True

    def plan_command(
        self, command: str, cwd: str, *, sandbox: str = "sandbox", justification: str = ""
    ) -> CommandPlan:
        return self._services.plan_command(
            command, cwd, sandbox=sandbox, justification=justification
        )

    def run_command(
        self, call_id: str, command: str, cwd: str, timeout: float, plan: CommandPlan
    ) -> tuple[int, str] | None:
        result = self._ask(
            lambda: self._services.run_command(call_id, command, cwd, timeout, plan),
            no_answer(f"run `{command}`"),
            timeout=timeout + 30,
        )
        if isinstance(result, EditorRefused):
            raise result
        return result if isinstance(result, tuple) else None

    # -- loop side -------------------------------------------------------------------

    def close_open_calls(self, reason: str) -> None:
        """Queue a failed completion for every call the agent left open (turn end)."""
        self._drain()  # after everything the agent queued
        for call_id, start in list(self._open.items()):
            self._open.pop(call_id, None)
            self._send.send_nowait(
                ("end", ToolEnd(call_id, start.name, start.args, reason, failed=True))
            )

    def cancel_calls(self) -> None:
        """The turn is being cancelled: refuse pending and later approval requests at once."""
        self._cancelled = True
        if self._current is not None and self._current[1].on_cancel:
            self._current[0].cancel()

    async def finish(self) -> None:
        """Stop accepting items; :meth:`pump` returns once everything queued is sent.

        Nobody waits for the answer of a call still pending now (the agent is done or
        was abandoned), so it is abandoned rather than waited for.
        """
        self._drain()
        self._send.send_nowait(_END)
        if self._current is not None and self._current[1].awaited:
            self._current[0].cancel()

    async def pump(self) -> None:
        """Send queued items in order until :meth:`finish`."""
        pending: object | None = None
        while True:
            item = pending if pending is not None else await self._receive.receive()
            pending = None
            if item is _END:
                self._closed = True
                return
            if isinstance(item, tuple) and item[0] in (_TEXT, _THOUGHT):
                kind, parts = item[0], [item[1]]
                while True:  # coalesce what is already waiting, in order
                    try:
                        nxt = self._receive.receive_nowait()
                    except anyio.WouldBlock:
                        break
                    if isinstance(nxt, tuple) and nxt[0] == kind:
                        parts.append(nxt[1])
                    else:
                        pending = nxt
                        break
                chunk_kind: ChunkKind = (
                    "agent_message_chunk" if kind == _TEXT else "agent_thought_chunk"
                )
                try:
                    await self._services.send_text("".join(parts), chunk_kind)
                except Exception:
                    logger.exception("could not send a text chunk")
            elif isinstance(item, _Call):
                await self._run_call(item)
            else:
                await self._deliver(self._render(item))

    async def _run_call(self, call: _Call) -> None:
        result = call.aborted
        if call.awaited and call.future.cancelled():
            return  # its caller gave up (a timeout) before it was sent: never send it
        try:
            if not (call.on_cancel and self._cancelled):
                with anyio.CancelScope() as scope:
                    self._current = (scope, call)
                    try:
                        result = await call.run()
                    except Exception as exc:
                        logger.exception("turn bridge call failed")
                        if not call.future.done():
                            call.future.set_exception(exc)
                        return
                    finally:
                        self._current = None
                if scope.cancelled_caught:
                    logger.info("editor request abandoned: the turn was cancelled or is over")
                    result = call.aborted
        finally:
            # Also when the pump itself is cancelled (the connection is torn down): the
            # agent's thread must not wait out its timeout for an answer never coming.
            if not call.future.done():
                call.future.set_result(result)

    def _render(self, item: Any) -> Any:
        kind, payload = item
        if kind == "start":
            return start_update(payload, cwd=self._cwd)
        if kind == "end":
            end: ToolEnd = payload
            note = self._notes.pop(end.call_id, None)
            update = end_update(
                end, cwd=self._cwd, proposals=self._proposals.pop(end.call_id, None)
            )
            if note:
                update.content = [text_content(note), *(update.content or [])]
                update.status = "failed"
            return update
        return payload

    async def _deliver(self, update: Any) -> None:
        try:
            await self._services.send(update)
        except Exception:
            logger.exception("could not send a session/update")
