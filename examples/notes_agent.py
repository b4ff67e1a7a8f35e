"""Your own synchronous agent in the full backend: sessions in SQLite, replay, approvals.

    python examples/notes_agent.py                           # serve it on stdio
    acpwire --agent notes_agent:factory                      # the same (with examples/ on PYTHONPATH)

A turn runs in a worker thread: block as you like, report through ``hooks``. This agent
answers ``note: <text>`` by appending the text to NOTES.md in the session's folder (a
``write_file`` tool call whose diff the user approves first; the file is read and written
through the editor when it offers that), ``count`` by counting
slowly (a cancel stops it) and anything else by echoing it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import acpwire
from acpwire import (
    BaseAgent,
    EditProposal,
    Message,
    SessionContext,
    ToolEnd,
    ToolStart,
    TurnHooks,
    TurnResult,
)


class NotesAgent(BaseAgent):
    def run_turn(
        self,
        content: str | list[dict[str, Any]],
        history: list[Message],
        *,
        cwd: str,
        hooks: TurnHooks,
    ) -> TurnResult:
        text = content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)
        if text.startswith("note:"):
            return self.write_note(text.removeprefix("note:").strip(), content, history, cwd, hooks)
        if text.strip() == "count":
            for n in range(1, 100):
                if self.interrupted:  # session/cancel: stop as soon as you can
                    return self.reply(content, history, "stopped", streamed=False)
                hooks.on_text_delta(f"{n} ")
                time.sleep(0.05)
        hooks.on_thought_delta("Echoing.")
        hooks.on_text_delta(text)
        return self.reply(content, history, text)

    def write_note(
        self, note: str, content: Any, history: list[Message], cwd: str, hooks: TurnHooks
    ) -> TurnResult:
        path = Path(cwd) / "NOTES.md"
        old = None
        if path.exists():  # the editor's buffer (unsaved changes included) when it offers one
            old = hooks.read_text_file(str(path))
            if old is None:  # it does not: read the disk
                old = path.read_text()
        new = (old or "") + f"- {note}\n"
        call_id = f"note-{len(history)}"
        args = {"path": str(path), "content": new}
        hooks.on_tool_start(ToolStart(call_id, "write_file", args))
        approved = hooks.approve_edits(call_id, [EditProposal(str(path), old, new)])
        if approved and not hooks.write_text_file(str(path), new):
            path.write_text(new)  # the editor does not write files for us: write it here
        result = "written" if approved else "the user declined the edit"
        hooks.on_tool_end(ToolEnd(call_id, "write_file", args, result, failed=not approved))
        answer = f"Noted in {path.name}." if approved else "Not written."
        hooks.on_text_delta(answer)
        calls = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": "write_file", "arguments": json.dumps(args)},
            }
        ]
        extra: list[Message] = [
            {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "tool_call_id": call_id, "content": result},
        ]
        return self.reply(content, history, answer, extra=extra)


def factory(context: SessionContext) -> NotesAgent:
    """One agent per session (a restored session gets a new one with the same context)."""
    return NotesAgent(context)


if __name__ == "__main__":
    acpwire.serve(factory)
