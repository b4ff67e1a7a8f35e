"""Runtime state of one open ACP session (what is not in the database).

A :class:`SessionState` pairs the stored record with the live agent, the conversation
history, the queue of prompts waiting for the running turn and the per-session approval
grants. Its fields are only mutated on the event loop, except ``history`` which the turn
runner replaces when a turn ends.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from acpwire.store import SessionRecord

if TYPE_CHECKING:  # the seam's classes load with the prompt machinery, after session/new
    from acpwire.agent.seam import Message, SyncAgent

DEFAULT_MODE = "default"
MODES: dict[str, tuple[str, str]] = {
    "default": (
        "Default",
        "Ask before every file edit; commands run in the sandbox (asked where there is none).",
    ),
    "accept_edits": (
        "Accept Edits",
        "Edit files in the workspace and the temp dir without asking; still asks for sensitive"
        " paths; commands run in the sandbox.",
    ),
    "dont_ask": (
        "Don't Ask",
        "Edit files anywhere in this session without asking; still asks for sensitive paths;"
        " commands run in the sandbox.",
    ),
    "full_access": (
        "Full Access (no sandbox)",
        "As Don't Ask, and commands run outside the sandbox without asking (dangerous ones are"
        " still asked).",
    ),
}
"""Session modes: id -> (name, description). They set the edit-approval policy and whether
commands may run unsandboxed unasked (``full_access`` only: :mod:`acpwire.sandbox.decide`)."""


@dataclass(slots=True, eq=False)
class QueuedPrompt:
    """A prompt that arrived while a turn was running (or the prompt of a turn)."""

    content: str | list[dict[str, Any]]
    display: str
    pending_id: int | None = None
    """Its row in the store's pending prompts while it waits (accepted, not yet run)."""
    stored: anyio.Event | None = None
    """Set once the pending row is written (or failed to be): its turn waits for it."""
    started: bool = False


@dataclass(slots=True)
class SessionState:
    """One open session: its record, live agent and turn bookkeeping."""

    record: SessionRecord
    agent: SyncAgent
    history: list[Message] = field(default_factory=list)
    queue: deque[QueuedPrompt] = field(default_factory=deque)
    running: bool = False
    cancel_requested: bool = False
    prompts_arrived: int = 0
    """Prompt requests received and not answered yet (for cancels right behind them)."""
    cancel_epoch: int = 0
    """Counts the cancels that hit a running or arriving prompt."""
    current_prompt: QueuedPrompt | None = None
    """The prompt of the running turn (for ``/steer`` after a cancel)."""
    interrupted_prompt: QueuedPrompt | None = None
    unrun: list[QueuedPrompt] = field(default_factory=list)
    """Accepted prompts that will not run (a cancel dropped them), until the store says so."""
    reasoning_effort: str = "default"
    turn_done: anyio.Event | None = None
    """Set when the running turn (if any) has fully finished, thread included."""
    turn_lock: anyio.Lock = field(default_factory=anyio.Lock)
    """Held by a turn from its start until its history is saved: turns never overlap."""
    abort_calls: Callable[[], None] | None = None
    """Refuses the running turn's pending approval requests (set while a turn runs)."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    extra: dict[str, Any] = field(default_factory=dict)
    """Per-session services attached by other parts (MCP clients, approval memory)."""

    @property
    def id(self) -> str:
        return self.record.id

    def can_unload(self) -> bool:
        """Whether the database holds all there is to this session: idle, nothing queued
        or interrupted, and no attached service holding session-only state (MCP servers,
        "allow for this session" approvals)."""
        busy = self.turn_done is not None and not self.turn_done.is_set()
        if self.running or busy or self.queue or self.unrun or self.prompts_arrived:
            return False
        if self.interrupted_prompt is not None:
            return False
        return all(getattr(v, "holds_session_state", True) is False for v in self.extra.values())

    @property
    def cwd(self) -> str:
        return self.record.cwd

    @property
    def mode(self) -> str:
        return self.record.mode or DEFAULT_MODE
