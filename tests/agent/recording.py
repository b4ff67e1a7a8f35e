"""Test helpers: a recording :class:`TurnHooks` (a real class, no mock library) and a tool context."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from acpwire.agent.cancel import CancelToken
from acpwire.agent.embedded.default import DefaultAgent
from acpwire.agent.embedded.tools import LocalRunner, SessionState, ToolContext
from acpwire.agent.embedded.tools.terminal import unsandboxed_plan
from acpwire.agent.seam import (
    AccessProposal,
    ApprovalAnswer,
    CommandPlan,
    CommandProposal,
    EditProposal,
    Message,
    PlanItem,
    ToolEnd,
    ToolStart,
    TurnResult,
)


class RecordingHooks:
    """Records every callback; approvals answer with the configured values."""

    def __init__(
        self, *, approve_edits: bool = True, command_answer: ApprovalAnswer = "once"
    ) -> None:
        self.approve_edits_answer = approve_edits
        self.command_answer: ApprovalAnswer = command_answer
        self.lock = threading.Lock()
        self.text: list[str] = []
        self.thoughts: list[str] = []
        self.starts: list[ToolStart] = []
        self.ends: list[ToolEnd] = []
        self.plans: list[list[PlanItem]] = []
        self.rotations: list[tuple[str, str]] = []
        self.edit_requests: list[tuple[str, list[EditProposal]]] = []
        self.command_requests: list[CommandProposal] = []
        self.access_requests: list[AccessProposal] = []
        self.access_refusal: str | None = None
        self.editor_buffers: dict[str, str] = {}
        self.editor_writes: dict[str, str] | None = None
        self.first_text = threading.Event()
        self.tool_started = threading.Event()
        self.on_start: Callable[[ToolStart], None] | None = None
        self.on_text: Callable[[str], None] | None = None

    @property
    def joined_text(self) -> str:
        return "".join(self.text)

    def on_text_delta(self, text: str) -> None:
        with self.lock:
            self.text.append(text)
        self.first_text.set()
        if self.on_text is not None:
            self.on_text(text)

    def on_thought_delta(self, text: str) -> None:
        with self.lock:
            self.thoughts.append(text)

    def on_tool_start(self, start: ToolStart) -> None:
        with self.lock:
            self.starts.append(start)
        self.tool_started.set()
        if self.on_start is not None:
            self.on_start(start)

    def on_tool_end(self, end: ToolEnd) -> None:
        with self.lock:
            self.ends.append(end)

    def on_plan(self, items: list[PlanItem]) -> None:
        with self.lock:
            self.plans.append(list(items))

    def on_internal_session_id(self, new_id: str, reason: str) -> None:
        with self.lock:
            self.rotations.append((new_id, reason))

    def approve_command(self, proposal: CommandProposal) -> ApprovalAnswer:
        with self.lock:
            self.command_requests.append(proposal)
        return self.command_answer

    def approve_edits(self, call_id: str, proposals: list[EditProposal]) -> bool:
        with self.lock:
            self.edit_requests.append((call_id, list(proposals)))
        return self.approve_edits_answer

    def approve_access(self, call_id: str, proposal: AccessProposal) -> str | None:
        with self.lock:
            self.access_requests.append(proposal)
        return self.access_refusal

    def read_text_file(self, path: str) -> str | None:
        return self.editor_buffers.get(path)

    def plan_command(
        self, command: str, cwd: str, *, sandbox: str = "sandbox", justification: str = ""
    ) -> CommandPlan:
        return unsandboxed_plan(command)

    def run_command(
        self, call_id: str, command: str, cwd: str, timeout: float, plan: CommandPlan
    ) -> tuple[int, str] | None:
        return None  # the agent's own local runner

    def write_text_file(self, path: str, content: str) -> bool:
        if self.editor_writes is None:
            return False
        self.editor_writes[path] = content
        return True


def make_ctx(
    cwd: Path, hooks: RecordingHooks | None = None, *, call_id: str = "call-1"
) -> ToolContext:
    """A tool context for calling a tool directly, without a model."""
    return ToolContext(
        call_id=call_id,
        cwd=str(cwd),
        hooks=hooks if hooks is not None else RecordingHooks(),
        cancel=CancelToken(),
        runner=LocalRunner(),
        state=SessionState(),
    )


def run_once(
    agent: DefaultAgent,
    cwd: Path,
    prompt: str = "hello",
    *,
    hooks: RecordingHooks | None = None,
    history: list[Message] | None = None,
) -> tuple[TurnResult, RecordingHooks]:
    """Run one turn with fresh (or given) recording hooks."""
    hooks = hooks if hooks is not None else RecordingHooks()
    return agent.run_turn(prompt, history or [], cwd=str(cwd), hooks=hooks), hooks
