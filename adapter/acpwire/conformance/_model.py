"""The scripted model of a conformance run: what the loopback model server answers.

The run's prompts carry a marker, ``[acpwire-check ACTION CHECK PATH?]``; the model reads
it from the latest user message that holds one (an agent may add messages of its own
after the prompt, and the conversation holds the earlier turns' markers) and answers,
from the tools the agent offered it:

- ``text``: a short text reply, streamed in a few chunks;
- ``slow``: a long text streamed slowly (a turn that lasts, for the cancel check); asked
  without streaming, the whole text after as long (an agent such as openhands asks so,
  and a slow reply sent at once ended its turn before the cancel could come);
- ``write``: a call of the agent's file-writing tool, writing PATH (the tool is found by
  name among those offered, its arguments from the tool's JSON schema);
- ``shell``: a call of the agent's shell tool running ``echo acpwire-check``.

Once a tool result came back (a tool message, or an assistant message calling a tool,
after the marked one), the reply is ``Done.``, so a turn makes one tool call and ends. A request without a marker (a title
the agent asks for, a summary...) gets ``None``: the server's own echo.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from acpwire.devtools.fake_llm import last_user_text

__all__ = ["MARK", "ScriptedModel", "marker"]

MARK: Final = re.compile(
    r"\[acpwire-check (?P<action>[a-z]+) (?P<check>[a-z-]+)(?: (?P<path>[^\]\s]+))?\]"
)
"""The marker a run's prompt carries (an agent without a model can read it too)."""

SLOW_S: Final = 10.0
"""How long the ``slow`` reply takes, streamed or not."""

CONTENT: Final = "written by acpwire check\n"
"""What the scripted write puts in the file."""

_WRITE_NAMES: Final = (
    "write_file",
    "write",
    "create_file",
    "write_to_file",
    "file_write",
    "save_file",
    "save",
    "str_replace_editor",
    "str_replace_based_edit_tool",
    "file_editor",
)
_SHELL_NAMES: Final = (
    "terminal",
    "bash",
    "shell",
    "run_command",
    "execute_command",
    "run_shell_command",
    "run_terminal_cmd",
    "shell_command",
    "execute",
    "exec",
    "cmd",
)
_PATH_KEYS: Final = ("path", "file_path", "filepath", "filename", "file", "target_file")
_CONTENT_KEYS: Final = ("content", "contents", "file_text", "text", "data", "new_content")
_COMMAND_KEYS: Final = ("command", "cmd", "script")


def marker(action: str, check: str, path: str | None = None) -> str:
    """The marker of a prompt: ``[acpwire-check write permission-allow /tmp/x/a.txt]``."""
    return f"[acpwire-check {action} {check}" + (f" {path}]" if path else "]")


@dataclass(slots=True)
class Seen:
    """What the model saw of one check's turn."""

    requests: int = 0
    tools: list[str] = field(default_factory=list)
    """The tool names the agent offered (from its first request of the turn)."""
    called: str | None = None
    """The tool the model called, if any."""


def _tools(body: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    found: dict[str, Mapping[str, Any]] = {}
    for tool in body.get("tools") or ():
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            parameters = function.get("parameters")
            found[function["name"]] = parameters if isinstance(parameters, Mapping) else {}
    return found


def _filler(schema: object) -> object:
    kind = schema.get("type") if isinstance(schema, Mapping) else None
    if isinstance(schema, Mapping) and isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    return {"boolean": False, "integer": 0, "number": 0, "array": [], "object": {}}.get(
        str(kind), ""
    )


def _arguments(
    parameters: Mapping[str, Any], wanted: Mapping[Sequence[str], object]
) -> dict[str, object] | None:
    """Arguments for a tool: each group of ``wanted`` keys filled with its value (the first
    key of the group the schema has), ``command: create`` for editor-style tools, the other
    required properties with neutral values; None when a group has no key in the schema."""
    properties = parameters.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    arguments: dict[str, object] = {}
    for keys, value in wanted.items():
        key = next((k for k in keys if k in properties), None)
        if key is None:
            return None
        arguments[key] = value
    command = properties.get("command")
    if (
        "command" not in arguments
        and isinstance(command, Mapping)
        and "create" in (command.get("enum") or ())
    ):
        arguments["command"] = "create"
    for name in parameters.get("required") or ():
        if name not in arguments:
            arguments[name] = _filler(properties.get(name))
    return arguments


class ScriptedModel:
    """The responder of :class:`~acpwire.devtools.fake_llm.FakeLLM` a run starts.

    ``write_tool`` / ``shell_tool`` name the agent's tools when the names it offers are
    not among the usual ones. Thread-safe: the server answers in threads."""

    def __init__(self, *, write_tool: str | None = None, shell_tool: str | None = None) -> None:
        self.write_tool = write_tool
        self.shell_tool = shell_tool
        self._lock = threading.Lock()
        self._seen: dict[str, Seen] = {}
        self._calls = 0

    def seen(self, check: str) -> Seen:
        with self._lock:
            return self._seen.setdefault(check, Seen())

    def __call__(self, body: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The reply to one chat request (None: not one of the run's), with token usage,
        as an OpenAI-compatible server reports it (an agent may require it: mistral-vibe
        asks for ``stream_options.include_usage`` and fails a turn without it)."""
        reply = self._reply(body)
        if reply is None:
            return None
        prompt = sum(len(str(m.get("content") or "")) for m in body.get("messages") or [])
        usage = {"prompt_tokens": max(1, prompt // 4), "completion_tokens": 8}
        return {"usage": usage, **reply}

    def _reply(self, body: Mapping[str, Any]) -> Mapping[str, Any] | None:
        messages = list(body.get("messages") or [])
        found = _marked(messages)
        if found is None:
            return None
        index, mark = found
        tools = _tools(body)
        with self._lock:
            seen = self._seen.setdefault(mark["check"], Seen())
            seen.requests += 1
            if not seen.tools:
                seen.tools = sorted(tools)
            self._calls += 1
            call_id = f"call_check_{self._calls}"
        if _answered_tool(messages[index + 1 :]):
            return {"text": "Done."}
        action = mark["action"]
        if action == "slow":
            if not body.get("stream"):  # as long in one piece as streamed, 100 x 0.1 s
                return {"text": "counting " * 100, "initial_delay": SLOW_S}
            return {"text": "counting " * 100, "chunks": 100, "delay": SLOW_S / 100}
        if action in ("write", "shell"):
            chosen = self._pick(action, tools, mark["path"] or "")
            if chosen is None:
                return {"text": f"No tool to {action} with."}
            name, arguments = chosen
            seen.called = name
            return {"tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}
        return {"text": "Hello from the scripted model.", "chunks": 3}

    def _pick(
        self, action: str, tools: Mapping[str, Mapping[str, Any]], path: str
    ) -> tuple[str, dict[str, object]] | None:
        names: Sequence[str]
        words: Sequence[str]
        if action == "write":
            forced, names, words = self.write_tool, _WRITE_NAMES, ("write",)
            wanted: dict[Sequence[str], object] = {_PATH_KEYS: path, _CONTENT_KEYS: CONTENT}
        else:
            forced, names, words = self.shell_tool, _SHELL_NAMES, ("shell", "bash", "command")
            wanted = {_COMMAND_KEYS: "echo acpwire-check"}
        if forced is not None:
            candidates = [forced] if forced in tools else []
        else:  # the usual names (any case, in their order), then names holding a word
            by_name = {name.lower(): name for name in tools}
            candidates = [by_name[n] for n in names if n in by_name]
            candidates += sorted(
                n for n in tools if any(w in n.lower() for w in words) and n not in candidates
            )
        for name in candidates:
            arguments = _arguments(tools[name], wanted)
            if arguments is not None:
                return name, arguments
        return None


def _marked(messages: Sequence[Mapping[str, Any]]) -> tuple[int, re.Match[str]] | None:
    """The latest user message holding a marker: its index and the marker."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "user":
            mark = MARK.search(last_user_text([messages[index]]))
            if mark is not None:
                return index, mark
    return None


def _answered_tool(after: Sequence[Mapping[str, Any]]) -> bool:
    """A tool call or its result after the marked message: the call was made."""
    return any(
        message.get("role") in ("tool", "function")
        or (message.get("role") == "assistant" and message.get("tool_calls"))
        for message in after
    )
