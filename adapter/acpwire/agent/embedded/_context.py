"""The model's view of a conversation in the embedded agent, and its compression.

The system prompt, the history as it goes on the wire (the reasoning and summary keys
kept in the stored history stripped), the estimate of its size in tokens, and the
summary that replaces all but the latest turns once it nears the context window.
:class:`~acpwire.agent.embedded.default.DefaultAgent` decides when to compress.
"""

from __future__ import annotations

import platform

from acpwire.agent.cancel import CancelToken
from acpwire.agent.embedded import compress as ctx_size
from acpwire.agent.embedded.llm import ChatClient
from acpwire.agent.embedded.tools import ToolRegistry
from acpwire.agent.seam import SUMMARY_KEY, Message, TurnUsage

__all__ = [
    "COMPRESS_AT",
    "KEEP_RECENT_TURNS",
    "SYSTEM_PROMPT",
    "estimate",
    "summarise_older",
    "system_prompt",
    "wire",
]

COMPRESS_AT = 0.8
"""The history is compressed above this share of the context window."""
KEEP_RECENT_TURNS = 2
"""Turns a compression keeps verbatim (the rest become one summary)."""
_WIRE_DROP = ("reasoning_content", "reasoning", SUMMARY_KEY)

SYSTEM_PROMPT = """You are a coding agent working in the user's project through their editor.
Working directory: {cwd}
Platform: {platform}
Tools: {tools}

Relative paths are resolved against the working directory. Read files before editing them.
Use `patch` for focused edits and `write_file` for new files; the user approves every edit.
Use `terminal` to run commands, tests and builds. For multi-step work keep a `todo` list.
Be concise, and say what you changed when you are done."""


def system_prompt(cwd: str, tools: ToolRegistry) -> str:
    return SYSTEM_PROMPT.format(
        cwd=cwd,
        platform=f"{platform.system()} {platform.release()}",
        tools=", ".join(tools.names()),
    )


def wire(messages: list[Message], system: str) -> list[Message]:
    """``messages`` as sent to the model, behind the ``system`` prompt."""
    head: Message = {"role": "system", "content": system}
    stripped = [
        {key: value for key, value in message.items() if key not in _WIRE_DROP}
        for message in messages
    ]
    return [head, *stripped]


def estimate(messages: list[Message], cwd: str, tools: ToolRegistry) -> int:
    """Tokens of ``messages`` with the system prompt and the tool specs."""
    extra = len(system_prompt(cwd, tools)) + len(str(tools.specs()))
    return ctx_size.estimate_tokens(messages, extra)


def summarise_older(
    messages: list[Message],
    keep: int,
    *,
    client: ChatClient,
    model: str,
    context_window: int,
    cancel: CancelToken,
) -> TurnUsage | None:
    """Replace all but the last ``keep`` turns with a summary, in place; the usage of
    the summary call, or None when there was nothing to summarise."""
    turns = ctx_size.split_turns(messages)
    if len(turns) <= keep:
        return None
    older = [message for group in turns[:-keep] for message in group]
    recent = [message for group in turns[-keep:] for message in group]
    summary, usage = ctx_size.summarise(
        client, model, older, max_chars=context_window * 2, cancel=cancel
    )
    messages[:] = [*ctx_size.summary_exchange(summary), *recent]
    return usage
