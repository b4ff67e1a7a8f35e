"""What a command's permission request shows, and the key its answer is remembered under.

The title never hides part of the command: whitespace runs, tabs and line breaks are
shown as visible marks (a run of spaces cannot push ``&& curl ...`` out of sight), and a
title cut for length says so and points at the request's content, which holds the exact
command in a fenced block. The key of a remembered answer is the exact command text
(a here-document indented differently is another command); an answer to a command that
leaves the sandbox is remembered apart from the same command run inside it.
"""

from __future__ import annotations

from typing import Final

__all__ = ["OUTSIDE_PREFIX", "TITLE_CHARS", "command_text", "command_title", "memory_key"]

TITLE_CHARS: Final = 200
OUTSIDE_PREFIX: Final = "[outside the sandbox] "
_CUT: Final = " … (cut: the whole command is below)"


def _visible(command: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(command):
        char = command[index]
        if char == "\n":
            out.append(" ⏎ ")
        elif char == "\r":
            out.append("␍")
        elif char == "\t":
            out.append("⇥")
        elif char == " ":
            end = index
            while end < len(command) and command[end] == " ":
                end += 1
            run = end - index
            out.append(" " if run == 1 else f" [{run} spaces] ")
            index = end
            continue
        elif not char.isprintable():
            out.append(f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")
        else:
            out.append(char)
        index += 1
    return "".join(out)


def command_title(reason: str, command: str) -> str:
    """``<reason>: <command>`` with whitespace made visible, cut (saying so) when long."""
    title = f"{reason}: {_visible(command)}"
    if len(title) <= TITLE_CHARS:
        return title
    return title[: TITLE_CHARS - len(_CUT)] + _CUT


def command_text(reason: str, command: str) -> str:
    """The request's content: the reason and the exact command, byte for byte."""
    fence = "```"
    while fence in command:
        fence += "`"
    return f"{reason}\n{fence}sh\n{command}\n{fence}"


def memory_key(command: str, *, leaves_sandbox: bool) -> str:
    """The exact command; prefixed when it asked to leave the sandbox."""
    return f"{OUTSIDE_PREFIX}{command}" if leaves_sandbox else command
