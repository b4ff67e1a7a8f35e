"""The seam between the ACP backend and a synchronous, tool-using agent.

The backend never knows which agent it drives: the embedded default agent, the real
Hermes ``AIAgent`` (through an adapter class) or a test double all implement
:class:`SyncAgent`. A turn runs in a worker thread; the agent reports progress through
the :class:`TurnHooks` it is handed *for that turn* (never through attributes mutated
on the agent), and the hooks turn each call into a ``session/update`` on the event loop.

Contract, each point fixing a defect seen in the Hermes adapter:

* every ``on_tool_start`` carries a ``call_id`` and is matched by exactly one
  ``on_tool_end`` with the same id, also for blocked, denied and failed calls;
* ``run_turn`` always returns a :class:`TurnResult` (never raises for model or tool
  errors; it reports them with ``stop="error"`` and ``error``);
* ``interrupt()`` is thread-safe and harmless when the agent is idle: it only affects a
  turn that is running at the time of the call;
* usage figures in a :class:`TurnResult` are for that turn only.

This module imports nothing from the protocol layers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypedDict

Message = dict[str, Any]
"""One chat message in OpenAI chat-completions shape (role, content, tool_calls, ...)."""

SUMMARY_KEY = "acpwire_summary"
"""Set (true) on the messages a context compression wrote in place of older turns, so a
replay can show them as a note; agents strip it before sending messages to a model."""

StopKind = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"]
ApprovalAnswer = Literal["once", "session", "always", "deny"]


class PlanItem(TypedDict):
    """One todo entry as the agent's ``todo`` tool keeps it."""

    id: str
    content: str
    status: Literal["pending", "in_progress", "completed", "cancelled"]


@dataclass(frozen=True, slots=True)
class ToolStart:
    """A tool call the agent is about to run."""

    call_id: str
    name: str
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolEnd:
    """The end of a tool call: its result text and whether it failed."""

    call_id: str
    name: str
    args: dict[str, Any]
    result: str
    failed: bool = False
    duration_s: float = 0.0


@dataclass(frozen=True, slots=True)
class EditProposal:
    """A file change the agent wants to make, shown to the user before it happens.

    ``old_text`` is ``None`` for a file that does not exist yet. A multi-file patch
    produces one proposal per file, asked together.
    """

    path: str
    old_text: str | None
    new_text: str
    must_ask: bool = False
    """The exact change could not be worked out here (a patch only the agent parses):
    always asked, whatever the session's edit policy."""


@dataclass(frozen=True, slots=True)
class CommandProposal:
    """A shell command that the agent's safety check flagged as dangerous."""

    command: str
    reason: str
    allow_permanent: bool = True
    one_time: bool = False
    """The agent's own safety check refused the command and the user may override that for
    this one run only: "allow once" and "deny" are offered, no remembered approval applies
    and none is recorded (a remembered denial still denies)."""
    leaves_sandbox: bool = False
    """The command asked to run with more than the sandbox allows (network, or no sandbox);
    remembered apart from the same command run inside it."""


@dataclass(frozen=True, slots=True)
class GuardReport:
    """What the sandbox's check after a command did: the protected paths the command
    created, each ``(path, why it is protected, where it was moved or None)``, and a
    note when the check could not see everything."""

    removed: tuple[tuple[str, str, str | None], ...] = ()
    note: str = ""


class GuardRefused(Exception):
    """The sandbox cannot be set up for this run as it was planned; nothing ran.
    ``report``: what the guard did all the same (left by an earlier command, moved)."""

    def __init__(self, message: str, report: GuardReport | None = None) -> None:
        super().__init__(message)
        self.report = report or GuardReport()


class CommandGuard(Protocol):
    """The per-run part of a sandboxed command: set up right before it starts, checked
    right after it ends (also when it failed, timed out or was cancelled)."""

    def start(self) -> tuple[str, ...]:
        """Prepare the sandbox for this run; the argv to start. Raises
        :class:`GuardRefused` when it cannot."""
        ...

    def finish(self) -> GuardReport:
        """Undo the preparation and check what the command left; called once per start."""
        ...


@dataclass(frozen=True, slots=True)
class CommandPlan:
    """How one command runs, decided by whoever drives the agent (the backend: session
    mode, sandbox, secrets). ``ask`` is the reason to ask the user first (None: run it
    unasked); ``argv`` and ``env`` are the process to start (``argv`` empty: ``bash -c``
    with ``env``); ``guard``, when set, is started right before the run (its argv
    replaces ``argv``) and finished right after."""

    ask: str | None
    argv: tuple[str, ...] = ()
    env: dict[str, str] | None = None
    sandboxed: bool = False
    leaves_sandbox: bool = False
    guard: CommandGuard | None = None


class EditorRefused(Exception):
    """The editor answered a read, a write or a terminal with an error: its answer is final.

    Raised by :meth:`TurnHooks.read_text_file`, :meth:`TurnHooks.write_text_file` and
    :meth:`TurnHooks.run_command`; the tool call fails with this message and nothing is
    done locally instead. (A client that does not offer the method at all gets None/False
    from the hook, and the agent uses the disk or a local process.)
    """


@dataclass(frozen=True, slots=True)
class AccessProposal:
    """A read or an MCP tool call, which Default mode may ask the user about first.

    ``kind`` ``read``: ``target`` is the absolute path to be read (a file, or the folder a
    search starts in); ``tool``: ``target`` is the tool's registered name and ``detail``
    its arguments as JSON (an MCP tool, or an agent's own tool with a ``reason``)."""

    kind: Literal["read", "tool"]
    target: str
    detail: str = ""
    reason: str = ""
    """For a ``tool``: what the call does that makes it asked (shown to the user; empty:
    an MCP tool call)."""
    every_mode: bool = False
    """For a ``tool``: asked in every mode but Full Access, not only in Default (a call
    that may reach beyond the session's workspace)."""


@dataclass(slots=True)
class TurnUsage:
    """Token counts of one turn (not session totals)."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_read_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(slots=True)
class TurnResult:
    """What a finished turn hands back to the backend."""

    messages: list[Message]
    """The full new history (the history passed in plus this turn's messages)."""
    final_text: str | None = None
    stop: StopKind = "end_turn"
    usage: TurnUsage = field(default_factory=TurnUsage)
    error: str | None = None
    pending_steer: str | None = None
    """Steering text that arrived too late to be used in this turn."""
    streamed: bool = True
    """False when ``final_text`` was never delivered through ``on_text_delta``."""


class TurnHooks(Protocol):
    """Callbacks for one turn. Thread-safe; called from the agent's worker thread."""

    def on_text_delta(self, text: str) -> None: ...
    def on_thought_delta(self, text: str) -> None: ...
    def on_tool_start(self, start: ToolStart) -> None: ...
    def on_tool_end(self, end: ToolEnd) -> None: ...
    def on_plan(self, items: list[PlanItem]) -> None: ...
    def on_internal_session_id(self, new_id: str, reason: str) -> None:
        """The agent's internal id rotated (for example after context compression)."""
        ...

    def approve_command(self, proposal: CommandProposal) -> ApprovalAnswer:
        """Block until the user answers; anything but an explicit allow is ``"deny"``."""
        ...

    def approve_edits(self, call_id: str, proposals: list[EditProposal]) -> bool:
        """Block until the user approves or denies all of ``proposals`` at once."""
        ...

    def approve_access(self, call_id: str, proposal: AccessProposal) -> str | None:
        """Block until the read or tool call may go ahead: None = go ahead, else the
        refusal text the model reads (nothing was read or called)."""
        ...

    def read_text_file(self, path: str) -> str | None:
        """Read through the editor when it offers that (unsaved buffers); None = use disk.
        Raises :class:`EditorRefused` when the editor answered with an error."""
        ...

    def write_text_file(self, path: str, content: str) -> bool:
        """Write through the editor when it offers that; False = write to disk yourself.
        Raises :class:`EditorRefused` when the editor answered with an error."""
        ...

    def plan_command(
        self, command: str, cwd: str, *, sandbox: str = "sandbox", justification: str = ""
    ) -> CommandPlan:
        """How ``command`` runs: asked or not, in the sandbox or not (``sandbox``: what the
        model asked for, ``"sandbox"``, ``"network"`` or ``"none"``)."""
        ...

    def run_command(
        self, call_id: str, command: str, cwd: str, timeout: float, plan: CommandPlan
    ) -> tuple[int, str] | None:
        """Run a shell command in an editor terminal when it offers one (the tool call then
        shows the live terminal), as ``plan`` says: ``(exit code, output)``; None = run it
        locally. Raises :class:`EditorRefused` when the editor refused to create the
        terminal."""
        ...


class SyncAgent(Protocol):
    """A synchronous agent that the backend drives one turn at a time per session."""

    @property
    def internal_session_id(self) -> str: ...
    @property
    def model(self) -> str: ...

    def run_turn(
        self,
        content: str | list[dict[str, Any]],
        history: list[Message],
        *,
        cwd: str,
        hooks: TurnHooks,
    ) -> TurnResult:
        """Run one prompt to completion. Blocking; never raises for model/tool errors."""
        ...

    def interrupt(self) -> None:
        """Stop the running turn as soon as possible. A no-op when idle."""
        ...

    def steer(self, text: str) -> bool:
        """Add guidance to the running turn; False when no turn is running."""
        ...

    def compress(self, history: list[Message], *, force: bool) -> list[Message]:
        """Return a shorter history (summary plus recent turns)."""
        ...

    def context_usage(self, history: list[Message]) -> tuple[int, int]:
        """(estimated tokens used, context window size)."""
        ...

    def compression_threshold(self) -> int:
        """Estimated tokens of context at which the agent compresses it on its own."""
        ...

    def reset(self) -> None:
        """Forget what the agent keeps of the conversation besides its history (``/reset``)."""
        ...

    def tool_descriptions(self) -> list[tuple[str, str]]:
        """(name, one-line description) of every tool offered to the model."""
        ...

    def set_model(self, model: str) -> None: ...
    def set_reasoning_effort(self, effort: str | None) -> None:
        """How hard a reasoning model should think (``low``/``medium``/``high``); None = the
        model's default."""
        ...

    def close(self) -> None:
        """Release resources (MCP clients, HTTP pools)."""
        ...
