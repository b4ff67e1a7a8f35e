"""The turn bridge: the agent's worker-thread callbacks become ordered ``session/update``s.

The agent thread never waits for the editor to read an update: callbacks queue items
and return (the queue, its batched wake-ups and its pump are :mod:`~.handoff`); one pump
task on the event loop sends them in order. Text and thought deltas that pile up while
the client is slow are coalesced into one chunk (joined, never reordered or dropped).
Calls that need an answer (approvals, reading a file through the
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

import concurrent.futures
import logging
import threading
from typing import Any, Protocol, cast, get_args

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
from acpwire.link.fastpath import ChunkKind
from acpwire.render import end_update, plan_update, start_update, text_content
from acpwire.server.editor.refusals import no_answer
from acpwire.server.turns.handoff import TEXT, THOUGHT, Call, Handoff

__all__ = ["TurnBridge", "TurnServices"]

logger = logging.getLogger(__name__)


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


_ANSWERS = frozenset(get_args(ApprovalAnswer))


class TurnBridge:
    """``TurnHooks`` for one turn of one session."""

    def __init__(self, services: TurnServices, *, cwd: str, call_timeout: float) -> None:
        self._services = services
        self._cwd = cwd
        self._handoff = Handoff(call_timeout=call_timeout)
        self._put, self._ask = self._handoff.put, self._handoff.ask
        self._open: dict[str, ToolStart] = {}
        self._proposals: dict[str, list[EditProposal]] = {}
        self._notes: dict[str, str] = {}
        self._local = threading.local()

    # -- thread side -----------------------------------------------------------------

    def on_text_delta(self, text: str) -> None:
        if text:
            self._put((TEXT, text))

    def on_thought_delta(self, text: str) -> None:
        if text:
            self._put((THOUGHT, text))

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
        rotated = Call(
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
        self._handoff.drain()  # after everything the agent queued
        for call_id, start in list(self._open.items()):
            self._open.pop(call_id, None)
            self._handoff.put_now(
                ("end", ToolEnd(call_id, start.name, start.args, reason, failed=True))
            )

    def cancel_calls(self) -> None:
        """The turn is being cancelled: refuse pending and later approval requests at once."""
        self._handoff.cancel_calls()

    async def finish(self) -> None:
        """Stop accepting items; :meth:`pump` returns once everything queued is sent.

        Nobody waits for the answer of a call still pending now (the agent is done or
        was abandoned), so it is abandoned rather than waited for.
        """
        self._handoff.finish()

    async def pump(self) -> None:
        """Send queued items in order until :meth:`finish`."""
        await self._handoff.pump(self._handle)

    async def _handle(self, item: Any) -> None:
        kind = item[0] if isinstance(item, tuple) else None
        if kind in (TEXT, THOUGHT):
            chunk_kind: ChunkKind = "agent_message_chunk" if kind == TEXT else "agent_thought_chunk"
            try:
                await self._services.send_text(item[1], chunk_kind)
            except Exception:
                logger.exception("could not send a text chunk")
        else:
            await self._deliver(self._render(item))

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
