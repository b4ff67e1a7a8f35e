"""Slash commands handled by the backend itself, and the list advertised to the editor.

A prompt that is only text and starts with ``/`` is looked up here. A known command
answers with one message (or asks for a prompt to be run, for ``/steer`` and ``/queue``
on an idle session); an unknown ``/x`` goes to the model unchanged.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from acp_v1 import models as m
from acpwire._version import __version__
from acpwire.server.editor.services import SessionServices, access_memory, approval_memory
from acpwire.server.sessions import options
from acpwire.server.sessions.state import QueuedPrompt, SessionState

if TYPE_CHECKING:
    from contextlib import AbstractAsyncContextManager

    from acpwire.server.editor.backend_view import Backend


class Runner(Protocol):
    """What a command asks of the turn machinery
    (:class:`~.runner.TurnRunner`, which runs the commands)."""

    @property
    def backend(self) -> Backend: ...

    async def send_config(self, state: SessionState) -> None: ...

    def between_turns(self, state: SessionState) -> AbstractAsyncContextManager[None]: ...

    async def enqueue(self, state: SessionState, queued: QueuedPrompt) -> int: ...


@dataclass(frozen=True, slots=True)
class RunPrompt:
    """Run ``content`` as an ordinary prompt (``display``: how it is shown, when that
    differs: attachments as placeholders)."""

    content: str | list[dict[str, Any]]
    display: str | None = None


COMMANDS: dict[str, tuple[str, str | None]] = {
    "help": ("List available commands", None),
    "model": ("Show the current model, or switch models", "model name to switch to"),
    "tools": ("List available tools with descriptions", None),
    "context": ("Show conversation size and context usage", None),
    "reset": ("Clear the conversation history", None),
    "compact": ("Compress the conversation context (alias: /compress)", None),
    "steer": ("Add guidance to the running turn", "guidance for the active turn"),
    "queue": ("Queue a prompt to run after the current turn", "prompt to run next"),
    "approvals": ("List remembered approvals, or revoke one", "revoke <command>"),
    "version": ("Show the acpwire version", None),
}
ALIASES = {"compress": "compact"}


def advertised() -> list[m.AvailableCommand]:
    return [
        m.AvailableCommand(
            name=name,
            description=desc,
            input=m.UnstructuredCommandInput(hint=hint) if hint else None,
        )
        for name, (desc, hint) in COMMANDS.items()
    ]


def _items(lines: list[str]) -> str:
    """A Markdown list: editors that render Markdown (Toad, Zed) run single newlines
    together into one paragraph, so replies are paragraphs and lists only."""
    return "\n".join(f"- {line}" for line in lines)


def _help() -> str:
    lines = [f"`/{name}`: {desc}" for name, (desc, _) in COMMANDS.items()]
    return "Available commands:\n\n" + _items(lines) + "\n\nOther /commands are sent to the model."


async def handle(
    runner: Runner, state: SessionState, text: str, *, full: str | None = None
) -> str | RunPrompt | None:
    """The reply to a slash command, a prompt to run instead, or None (send to the model).

    ``text`` is the prompt as shown; ``full`` the same with its attachments inlined, which
    ``/queue`` and ``/steer`` pass on."""
    head, _, rest = text[1:].partition(" ")
    full_arg = (full or text)[1:].partition(" ")[2].strip() or rest.strip()
    name = ALIASES.get(head.lower(), head.lower())
    arg = rest.strip()
    if name not in COMMANDS:
        return None
    backend = runner.backend
    agent = state.agent
    if name == "help":
        return _help()
    if name == "version":
        identity = getattr(backend.factory, "agent_identity", None)
        served = identity() if callable(identity) else None
        agent_name = f"{served[0]} {served[1]}" if served else backend.factory.name
        return f"acpwire {__version__} (agent: {agent_name}, model {agent.model})"
    if name == "model":
        if arg:
            try:
                await backend.blocking(agent.set_model, arg)
            except ValueError as exc:
                return f"Could not switch the model: {exc}"
            model = options.stored_model(agent)
            await backend.blocking(lambda: backend.manager.update(state, model=model))
            await runner.send_config(state)
        provider = options.agent_provider(agent, backend.factory.provider)
        head = "Model switched to" if arg else "Current model"
        return f"{head}: {agent.model}\n\nProvider: {provider}"
    if name == "tools":
        tools = await backend.blocking(agent.tool_descriptions)
        lines = [f"`{n}`: {d if len(d) <= 80 else d[:77] + '...'}" for n, d in tools]
        return "Available tools:\n\n" + _items(lines) if lines else "No tools available."
    if name == "context":
        return await _context(state)
    if name == "reset":
        if state.running:
            return "A turn is running; cancel it before /reset."
        async with runner.between_turns(state):
            await backend.blocking(backend.manager.clear_history, state)
            await backend.blocking(state.agent.reset)
        return "Conversation history cleared."
    if name == "compact":
        return await _compact(runner, state)
    if name == "steer":
        return await _steer(runner, state, arg, full_arg)
    if name == "queue":
        if not arg:
            return "Usage: /queue <prompt>"
        if not state.running:
            return RunPrompt(full_arg, arg)
        queued = await runner.enqueue(state, QueuedPrompt(full_arg, arg))
        return f"Queued for the next turn. ({queued} queued)"
    return await _approvals(runner, state, arg)


async def _context(state: SessionState) -> str:
    counts = Counter(str(msg.get("role", "?")) for msg in state.history)
    used, size = await anyio.to_thread.run_sync(state.agent.context_usage, list(state.history))
    pct = 100 * used / size if size else 0.0
    threshold = await anyio.to_thread.run_sync(state.agent.compression_threshold)
    roles = ", ".join(f"{role}: {n}" for role, n in sorted(counts.items())) or "empty"
    due = " (due now)" if size and used >= threshold else ""
    return _items(
        [
            f"Messages: {len(state.history)} ({roles})",
            f"Model: {state.agent.model}",
            f"Context usage: ~{used} / {size} tokens ({pct:.0f}%)",
            f"Compression threshold: ~{threshold} tokens{due}",
        ]
    )


async def _compact(runner: Runner, state: SessionState) -> str:
    """Compress the history between turns. No turn overlaps it and the session counts
    as running meanwhile, so a prompt arriving now is queued (and run after the reply)
    instead of being answered from, and then dropped with, the history being replaced."""
    if state.running:
        return "A turn is running; /compact works between turns."
    async with runner.between_turns(state):
        before_msgs = len(state.history)
        before_used, _ = await anyio.to_thread.run_sync(
            state.agent.context_usage, list(state.history)
        )
        before_id = state.agent.internal_session_id
        compressed = await anyio.to_thread.run_sync(
            lambda: state.agent.compress(list(state.history), force=True)
        )
        await runner.backend.blocking(runner.backend.manager.save_history, state, compressed)
    after_id = state.agent.internal_session_id
    if after_id != before_id:
        await SessionServices(runner.backend, state).rotated(after_id, "compression")
    after_used, _ = await anyio.to_thread.run_sync(state.agent.context_usage, list(compressed))
    return (
        f"Context compressed: {before_msgs} -> {len(compressed)} messages\n\n"
        f"~{before_used} -> ~{after_used} tokens"
    )


async def _steer(runner: Runner, state: SessionState, arg: str, full_arg: str) -> str | RunPrompt:
    if not arg:
        return "Usage: /steer <guidance>"
    if state.running:
        if state.agent.steer(full_arg):
            return f"Steer queued for the active turn: {arg[:80]}"
        queued = await runner.enqueue(state, QueuedPrompt(full_arg, arg))
        return f"The turn is finishing; queued for the next turn. ({queued} queued)"
    interrupted, state.interrupted_prompt = state.interrupted_prompt, None
    if interrupted is not None:
        # The interrupted prompt as it was (attachments and images included), then the guidance.
        guidance = f"\n\nUser correction/guidance after interrupt: {full_arg}"
        content: str | list[dict[str, Any]] = (
            interrupted.content + guidance
            if isinstance(interrupted.content, str)
            else [*interrupted.content, {"type": "text", "text": guidance}]
        )
        shown = f"{interrupted.display}\n\nUser correction/guidance after interrupt: {arg}"
        return RunPrompt(content, shown)
    return RunPrompt(full_arg, arg)


async def _approvals(runner: Runner, state: SessionState, arg: str) -> str:
    """acpwire's remembered decisions for this workspace, and the agent's own list
    (``factory.shared_approvals``: Hermes' command_allowlist); revoke takes from both."""
    memory = approval_memory(runner.backend, state)
    access = access_memory(runner.backend, state)
    make_shared = getattr(runner.backend.factory, "shared_approvals", None)
    shared = make_shared() if callable(make_shared) else None
    if arg.startswith("revoke"):
        key = arg.removeprefix("revoke").strip()
        if not key:
            return "Usage: /approvals revoke <command> | /approvals revoke tool <name>"
        tool = key.removeprefix("tool ").strip() if key.startswith("tool ") else None
        if tool and access.revoke_tool(state.cwd, tool):
            return f"Revoked: the MCP tool {tool} is asked again"
        done = [tool is None and memory.revoke(state.cwd, key)]
        if tool is None and shared is not None:
            done.append(await runner.backend.blocking(shared.revoke, key))
        if any(done):
            return f"Revoked the remembered decision for: {key}"
        return f"No remembered decision for: {key}"
    stored = memory.list_persistent(state.cwd)
    lines = [f"{d.decision}: `{d.key}`" for d in stored]
    session = "yes" if memory.edits_allowed_for_session else "no"
    body = _items(lines) if lines else "(none)"
    tools = _items([f"allow tool: `{name}`" for name in access.allowed_tools(state.cwd)])
    text = (
        f"Remembered command decisions for {state.cwd}:\n\n{body}\n\n"
        f"MCP tools always allowed here:\n\n{tools or '(none)'}"
    )
    if shared is not None:
        entries = await runner.backend.blocking(shared.entries)
        listed = _items([f"allow: `{e}`" for e in entries]) if entries else "(none)"
        text += f"\n\nIn {shared.where}:\n\n{listed}"
    return f"{text}\n\nWorkspace edits allowed for this session: {session}"
