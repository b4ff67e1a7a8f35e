"""One boundary for every agent: Hermes' tool calls judged and run by acpwire's own policy.

Hermes runs each tool call of its model through ``hermes_cli.middleware``'s
``tool_execution`` chain, on its sequential and concurrent paths alike, for the tools
its agent loop handles itself (``memory``, ``session_search``, ``delegate_task``,
``todo``) and for those its registry dispatches (``terminal``, the file tools,
``execute_code``, MCP tools...). :func:`install` puts one callback at the end of that
chain, once per process, so it is the last thing before the tool runs:

* **Routed** (:data:`ROUTED`): ``terminal``, ``read_file``, ``write_file``, ``patch`` and
  ``search_files`` never reach Hermes' handlers. They run as acpwire's own tools (the
  embedded agent's) with the turn's hooks: commands sandboxed or asked by mode with the
  scrubbed environment, edits asked with diffs and written pinned, reads asked outside the
  workspace or of protected paths, sizes and times bounded, the editor's ``fs/*`` and
  ``terminal/*`` used when offered and their refusal final. The model keeps Hermes'
  names and arguments (Hermes-only arguments are translated or named as ignored).
* **Decided** (:data:`DECISIONS`): every other tool of the ACP toolset is allowed, asked
  (as the session mode says) or refused before Hermes' handler runs. MCP tools run as
  acpwire's MCP tools (asked in Default, as with the embedded agent).
* **Refused**: anything else, a tool call that cannot be tied to a running acpwire turn,
  and any failure of this code (Hermes' chain would otherwise run the tool when a
  callback raises): nothing runs, and the model reads why.

A call is tied to its turn by Hermes' ``task_id`` (acpwire sets it to the ACP session
id); a ``delegate_task`` child's calls carry the child's id and are tied through
Hermes' registry of running subagents to the turn of the session that spawned them, so
children get the same boundary. Hermes' own command checks only add to acpwire's:
a hardline-blocked command or one the user's ``approvals.deny`` names never runs, and a
command Hermes' danger patterns flag is asked even where acpwire would not ask.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shlex
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from acpwire.agent.cancel import CancelToken
from acpwire.agent.embedded.toolcalls import run_tool
from acpwire.agent.embedded.tools.base import SessionState, Tool, ToolContext, ToolOutcome, failure
from acpwire.agent.embedded.tools.edits.patch import PatchTool
from acpwire.agent.embedded.tools.files import ReadFileTool, WriteFileTool
from acpwire.agent.embedded.tools.search import SearchFilesTool
from acpwire.agent.embedded.tools.terminal import LocalRunner, TerminalTool
from acpwire.agent.seam import AccessProposal, CommandPlan, CommandProposal, TurnHooks
from acpwire.config.limits import ToolLimits
from acpwire.hermes.modules import available, hermes_module

__all__ = [
    "DECISIONS",
    "NOT_SERVED",
    "ROUTED",
    "Boundary",
    "TurnBinding",
    "install",
    "shape_toolset",
]

logger = logging.getLogger(__name__)

Decision = Literal["allow", "ask", "ask_every_mode", "command", "delegate"]

ROUTED: Mapping[str, Tool] = {
    "terminal": TerminalTool(),
    "read_file": ReadFileTool(),
    "write_file": WriteFileTool(),
    "patch": PatchTool(),
    "search_files": SearchFilesTool(),
}
"""Hermes' tools that run as acpwire's own."""

BROWSER = (
    "browser_navigate",
    "browser_snapshot",
    "browser_click",
    "browser_type",
    "browser_scroll",
    "browser_back",
    "browser_press",
    "browser_get_images",
    "browser_vision",
    "browser_console",
    "browser_cdp",
    "browser_dialog",
)

DECISIONS: Mapping[str, tuple[Decision, str]] = {
    "todo": ("allow", "keeps the session's plan in memory"),
    "clarify": ("allow", "asks the user a question"),
    "skills_list": ("allow", "lists Hermes' skills"),
    "skill_view": ("allow", "reads one of Hermes' skills"),
    "memory": ("ask", "writes Hermes' memory in $HERMES_HOME, read by every later session"),
    "skill_manage": ("ask", "writes Hermes' skills in $HERMES_HOME, run by later sessions"),
    "session_search": (
        "ask_every_mode",
        "searches Hermes' sessions of every workspace (state.db)",
    ),
    "web_search": ("ask_every_mode", "sends a query to a web search service (network)"),
    "web_extract": ("ask_every_mode", "fetches web pages (network)"),
    "vision_analyze": (
        "ask_every_mode",
        "sends an image (a URL or a local file) to a vision model (network)",
    ),
    **dict.fromkeys(
        BROWSER, ("ask_every_mode", "drives a web browser (network, downloads, local files)")
    ),
    "execute_code": ("command", "runs model-written Python outside the sandbox"),
    "delegate_task": (
        "delegate",
        "runs child agents, in the foreground; their tool calls are judged here too",
    ),
}
"""Every other tool of Hermes' ACP toolset: allowed, asked in Default (``ask``), asked in
every mode but Full Access (``ask_every_mode``: what reaches the network, as a command
leaving the sandbox is, or beyond the workspace), judged as an unsandboxed command
(``command``), or allowed with its children bound to this turn (``delegate``)."""

NOT_SERVED: Mapping[str, str] = {
    "process": (
        "manages background processes, which would outlive the command sandbox's check"
        " after each command; commands run in the foreground with a timeout"
    ),
}
"""Tools left out of the toolset served over ACP, with the reason."""

TERMINAL_ESCALATION: Mapping[str, Any] = {
    "sandbox": TerminalTool.parameters["properties"]["sandbox"],
    "justification": TerminalTool.parameters["properties"]["justification"],
}
"""What Hermes' ``terminal`` schema gains: the way to ask for more than the sandbox."""

_IGNORED_TERMINAL = ("pty", "notify_on_complete", "watch_patterns", "check_interval")


@dataclass
class TurnBinding:
    """What a tool call of one running turn needs: the turn's hooks, cwd and cancel
    token, the id map of its tool calls, the caps, the agent (its session id ties a
    delegated child to it) and the session's MCP tools."""

    hooks: TurnHooks
    cwd: str
    cancel: CancelToken
    call_id: Callable[[str], str | None]
    """The id the editor knows for a Hermes tool-call id (None: not started)."""
    agent: Any
    limits: ToolLimits = field(default_factory=ToolLimits)
    mcp_tool: Callable[[str], Tool | None] = lambda _name: None
    failed: dict[str, bool] = field(default_factory=dict)
    """Hermes tool-call id -> whether the call failed here (the tool call's status)."""
    outer_ids: list[str] = field(default_factory=list)
    """Editor ids of this turn's running calls whose own tool calls come back through the
    boundary (``delegate_task``'s children, ``execute_code``'s calls into Hermes): those
    carry no id the editor knows, so they ask under the innermost of these."""
    state: SessionState = field(default_factory=SessionState)


class Boundary:
    """The process-wide table of running turns, and the judgement of each tool call."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._turns: dict[str, TurnBinding] = {}
        self._runner = LocalRunner()

    @contextlib.contextmanager
    def bind(self, task_id: str, binding: TurnBinding) -> Iterator[TurnBinding]:
        """Tie ``task_id``'s tool calls to ``binding`` for the block (one turn)."""
        install(self)
        with self._lock:
            self._turns[task_id] = binding
        try:
            yield binding
        finally:
            with self._lock:
                if self._turns.get(task_id) is binding:
                    del self._turns[task_id]

    def find(self, task_id: str) -> tuple[TurnBinding, bool] | None:
        """The turn a call of ``task_id`` belongs to and whether it comes from a
        delegated child (followed up its parents through Hermes' subagent registry)."""
        with self._lock:
            found = self._turns.get(task_id)
            turns = list(self._turns.values())
        if found is not None:
            return found, False
        delegate = hermes_module("tools.delegate_tool")
        records = getattr(delegate, "_active_subagents", None) if delegate else None
        if not isinstance(records, dict):
            return None
        with getattr(delegate, "_active_subagents_lock", contextlib.nullcontext()):
            agents = {
                str(key): record.get("agent")
                for key, record in records.items()
                if isinstance(record, dict)
            }
        child = agents.get(task_id)
        for _ in range(16):  # Hermes bounds delegation depth far below this
            if child is None:
                return None
            parent_session = getattr(child, "_parent_session_id", None)
            if not parent_session:
                return None
            for binding in turns:
                if getattr(binding.agent, "session_id", None) == parent_session:
                    return binding, True
            child = next(
                (a for a in agents.values() if getattr(a, "session_id", None) == parent_session),
                None,
            )
        return None

    def handle(
        self,
        tool_name: str,
        args: dict[str, Any],
        next_call: Callable[[dict[str, Any]], Any],
        task_id: str,
        hermes_call_id: str,
    ) -> Any:
        """The result of one Hermes tool call, judged (and maybe run) by acpwire."""
        found = self.find(task_id)
        if found is None:
            return failure(
                f"acpwire cannot tie this {tool_name} call to a running session turn,"
                " so it was not run"
            ).result_text
        binding, from_child = found
        call_id = binding.call_id(hermes_call_id) if not from_child else None
        if call_id is None:
            call_id = binding.outer_ids[-1] if binding.outer_ids else hermes_call_id
        ctx = ToolContext(
            call_id or f"hermes-{tool_name}",
            binding.cwd,
            binding.hooks,
            binding.cancel,
            self._runner,
            binding.state,
            binding.limits,
        )
        outcome = self._judge(tool_name, args, next_call, binding, ctx, from_child)
        if isinstance(outcome, ToolOutcome):
            if not from_child and hermes_call_id:
                binding.failed[hermes_call_id] = outcome.failed
            return outcome.result_text
        return outcome

    def _judge(
        self,
        name: str,
        args: dict[str, Any],
        next_call: Callable[[dict[str, Any]], Any],
        binding: TurnBinding,
        ctx: ToolContext,
        from_child: bool,
    ) -> ToolOutcome | Any:
        if ctx.cancel.cancelled:
            return failure("interrupted")
        routed = ROUTED.get(name)
        if routed is not None:
            return self._routed(name, routed, args, ctx)
        mcp = binding.mcp_tool(name)
        if mcp is not None:
            return run_tool(mcp, args, ctx)
        if name in NOT_SERVED:
            return failure(f"{name} is not available here: it {NOT_SERVED[name]}.")
        decided = DECISIONS.get(name)
        if decided is None:
            return failure(
                f"acpwire has no policy for the tool {name!r}, so it was not run"
                " (docs/SECURITY.md, 'When serving Hermes')"
            )
        decision, reason = decided
        if decision == "command":
            refused = _ask_as_command(name, args, reason, ctx)
            if refused is not None:
                return refused
            return _around(binding, ctx.call_id, lambda: next_call(args))
        if decision in ("ask", "ask_every_mode"):
            detail = json.dumps(args, ensure_ascii=False, default=str)[:4000]
            proposal = AccessProposal(
                "tool", name, detail, reason=reason, every_mode=decision == "ask_every_mode"
            )
            refusal = ctx.hooks.approve_access(ctx.call_id, proposal)
            if refusal is not None:
                return failure(refusal)
        if decision == "delegate" and not from_child:
            return _around(binding, ctx.call_id, lambda: _delegate_in_turn(binding.agent, args))
        return next_call(args)

    def _routed(self, name: str, tool: Tool, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        accepted = tool.parameters.get("properties", {})
        if name == "terminal":
            shaped, notes = _terminal_args(args, ctx.cwd)
            if isinstance(shaped, ToolOutcome):
                return shaped
            refused = _hermes_command_checks(str(shaped.get("command", "")))
            if refused is not None:
                return refused
            ctx = replace(ctx, hooks=_HermesDanger(ctx.hooks))
        else:
            shaped = {k: v for k, v in args.items() if k in accepted}
            notes = sorted(k for k in args if k not in accepted and k != "cross_profile")
        outcome = run_tool(tool, shaped, ctx)
        if notes:
            return _with_note(outcome, notes)
        return outcome


def _around(binding: TurnBinding, call_id: str, run: Callable[[], Any]) -> Any:
    """``run()`` with ``call_id`` the call its nested tool calls ask under."""
    binding.outer_ids.append(call_id)
    try:
        return run()
    finally:
        with contextlib.suppress(ValueError):
            binding.outer_ids.remove(call_id)


def _with_note(outcome: ToolOutcome, ignored: list[str]) -> ToolOutcome:
    """``outcome`` naming the arguments acpwire's tool does not take."""
    note = f"ignored here (not supported by acpwire's tool): {', '.join(ignored)}"
    try:
        value = json.loads(outcome.result_text)
    except ValueError:
        value = None
    if isinstance(value, dict):
        value["ignored_arguments"] = note
        return ToolOutcome(json.dumps(value, ensure_ascii=False), outcome.failed)
    return ToolOutcome(f"{outcome.result_text}\n[{note}]", outcome.failed)


def _terminal_args(
    args: dict[str, Any], cwd: str
) -> tuple[dict[str, Any] | ToolOutcome, list[str]]:
    """acpwire's ``terminal`` arguments for Hermes' (``workdir`` becomes a ``cd``)."""
    if args.get("background"):
        return failure(
            "background processes are not available when acpwire serves Hermes (they would"
            " outlive the sandbox's check after each command): run the command in the"
            " foreground with a timeout"
        ), []
    command = args.get("command")
    if not isinstance(command, str) or not command.strip():
        return failure("terminal needs a non-empty 'command'"), []
    workdir = args.get("workdir")
    if isinstance(workdir, str) and workdir.strip():
        target = os.path.normpath(os.path.join(cwd, os.path.expanduser(workdir)))
        if not os.path.isdir(target):
            return failure(f"workdir not found: {target}"), []
        if target != os.path.normpath(cwd):
            command = f"cd -- {shlex.quote(target)} && {command}"
    shaped: dict[str, Any] = {"command": command}
    for key in ("timeout", "sandbox", "justification"):
        if args.get(key) is not None:
            shaped[key] = args[key]
    ignored = [k for k in _IGNORED_TERMINAL if args.get(k)]
    return shaped, ignored


def _hermes_command_checks(command: str) -> ToolOutcome | None:
    """Hermes' hard refusals (its hardline list, the user's ``approvals.deny``)."""
    approval = hermes_module("tools.approval")
    if approval is None:
        return None
    hardline, why = approval.detect_hardline_command(command)
    if hardline:
        return failure(f"BLOCKED: Hermes never runs this command ({why}).", command=command)
    denied = approval._match_user_deny_rule(command)
    if denied:
        return failure(
            f"BLOCKED: the user's approvals.deny rule {denied!r} forbids this command.",
            command=command,
        )
    return None


def hermes_danger(command: str) -> str | None:
    """Why Hermes' danger patterns flag ``command`` (None: they do not)."""
    approval = hermes_module("tools.approval")
    if approval is None:
        return None
    dangerous, _key, description = approval.detect_dangerous_command(command)
    return f"Hermes flags it: {description}" if dangerous else None


class _HermesDanger:
    """The turn's hooks, with Hermes' danger patterns adding an ask to a command's plan
    (never removing one)."""

    def __init__(self, hooks: TurnHooks) -> None:
        self._hooks = hooks

    def __getattr__(self, name: str) -> Any:
        return getattr(self._hooks, name)

    def plan_command(
        self, command: str, cwd: str, *, sandbox: str = "sandbox", justification: str = ""
    ) -> CommandPlan:
        plan = self._hooks.plan_command(command, cwd, sandbox=sandbox, justification=justification)
        if plan.ask is None and (reason := hermes_danger(command)) is not None:
            return replace(plan, ask=reason)
        return plan


def _ask_as_command(
    name: str, args: dict[str, Any], reason: str, ctx: ToolContext
) -> ToolOutcome | None:
    """A tool that runs code as the user outside any sandbox: asked as a command that
    leaves the sandbox is (unasked only in Full Access)."""
    code = str(args.get("code") or json.dumps(args, ensure_ascii=False, default=str))
    plan = ctx.hooks.plan_command(code, ctx.cwd, sandbox="none", justification=reason)
    ask = plan.ask or hermes_danger(code)
    if ask is None:
        return None
    proposal = CommandProposal(command=code, reason=f"{name} {reason}", leaves_sandbox=True)
    answer = ctx.hooks.approve_command(proposal)
    if answer in ("once", "session", "always"):
        return None
    return failure(f"BLOCKED: the user denied this {name} call; nothing ran.")


def _delegate_in_turn(agent: Any, args: dict[str, Any]) -> Any:
    """``delegate_task`` as Hermes' own dispatch runs it, but in the foreground: Hermes
    runs a top-level agent's delegations in the background, where their tool calls would
    outlive the turn (and the editor could no longer be asked about them). A child's own
    delegations are synchronous in Hermes already."""
    delegate = hermes_module("tools.delegate_tool")
    if delegate is None:
        return failure("this Hermes has no tools.delegate_tool").result_text
    return delegate.delegate_task(
        goal=args.get("goal"),
        context=args.get("context"),
        tasks=delegate._strip_model_hidden_task_fields(args.get("tasks")),
        max_iterations=args.get("max_iterations"),
        role=args.get("role"),
        background=False,
        parent_agent=agent,
    )


_INSTALLED = threading.Lock()


def _middleware(boundary: Boundary) -> Callable[..., Any]:
    def acpwire_boundary(
        *,
        tool_name: str = "",
        args: Any = None,
        next_call: Callable[[dict[str, Any]], Any],
        task_id: str = "",
        tool_call_id: str = "",
        **_context: Any,
    ) -> Any:
        # Hermes runs the tool anyway when a middleware raises: never raise.
        try:
            return boundary.handle(
                str(tool_name),
                args if isinstance(args, dict) else {},
                next_call,
                str(task_id or ""),
                str(tool_call_id or ""),
            )
        except Exception as exc:
            logger.exception("acpwire's boundary failed on Hermes' %s call", tool_name)
            message = f"acpwire could not judge this {tool_name} call ({exc}); nothing ran"
            return failure(message).result_text

    acpwire_boundary.acpwire_boundary = boundary  # type: ignore[attr-defined]  # a marker
    return acpwire_boundary


def install(boundary: Boundary) -> None:
    """Put ``boundary``'s callback last in Hermes' ``tool_execution`` middleware chain
    (again if Hermes' plugin manager reloaded and dropped it)."""
    if not available():
        return  # no Hermes here, so no Hermes tool to run (an agent of its shape, in tests)
    plugins = hermes_module("hermes_cli.plugins")
    if plugins is None:  # a Hermes whose tools cannot be bounded: no turn runs
        raise RuntimeError("this Hermes has no hermes_cli.plugins: its tools cannot be bounded")
    with _INSTALLED:
        chain: list[Any] = plugins.get_plugin_manager()._middleware.setdefault("tool_execution", [])
        mine = [cb for cb in chain if getattr(cb, "acpwire_boundary", None) is boundary]
        if chain and mine and chain[-1] is mine[-1]:
            return
        for cb in mine:
            chain.remove(cb)
        chain.append(mine[-1] if mine else _middleware(boundary))


def shape_toolset(agent: Any) -> list[str]:
    """Shape the tools a Hermes session's model is offered: tools with no decision here
    and :data:`NOT_SERVED` are taken out; ``terminal`` gains ``sandbox`` and
    ``justification``. Returns the names offered (logged)."""
    kept: list[dict[str, Any]] = []
    dropped: list[str] = []
    for definition in list(getattr(agent, "tools", None) or []):
        function = definition.get("function") if isinstance(definition, dict) else None
        name = str(function.get("name", "")) if isinstance(function, dict) else ""
        if name in NOT_SERVED or (name not in ROUTED and name not in DECISIONS):
            dropped.append(name)
            continue
        if name == "terminal" and isinstance(function, dict):
            params = dict(function.get("parameters") or {"type": "object"})
            params["properties"] = {**(params.get("properties") or {}), **TERMINAL_ESCALATION}
            definition = {**definition, "function": {**function, "parameters": params}}
        kept.append(definition)
    agent.tools = kept
    names = [str(d["function"]["name"]) for d in kept]
    valid = getattr(agent, "valid_tool_names", None)
    if isinstance(valid, set):
        valid.difference_update(dropped)
    elif valid is not None:
        agent.valid_tool_names = set(names)
    invalidate = getattr(agent, "_invalidate_system_prompt", None)
    if callable(invalidate):
        invalidate()
    if dropped:
        logger.info("Hermes tools not served over ACP (no policy here): %s", ", ".join(dropped))
    logger.info("Hermes tools offered: %s", ", ".join(names))
    return names


BOUNDARY = Boundary()
"""The process's boundary (one Hermes registry and middleware chain per process)."""
