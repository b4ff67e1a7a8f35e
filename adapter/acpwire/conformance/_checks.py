"""The bodies of the checks of :data:`~._checklist.CHECKS`: each returns its evidence
(PASS) or raises :class:`~._client.Fail` / :class:`~._client.Skip`."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal

from ._checklist import CHECKS, NEWER_VERSION, OLDER_VERSION
from ._client import Fail, Run, Skip, Turn, error_of, error_text, short
from ._model import CONTENT
from ._repairs import repairs
from ._wire import AgentExited, AgentProcess, Incoming, NoAnswer
from .checker import TURN_OUTPUT

__all__ = ["BODIES"]

SETTLE_S: Final = 0.5
"""How long the run keeps reading after a cancelled turn, a session/load answer and the
end of input, for late messages."""


def _well_formed(answer: Incoming, type_name: str, method: str) -> None:
    """FAIL when a lenient receiver had to repair the answer's result (:mod:`._repairs`)."""
    found = repairs(type_name, answer.obj.get("result"))
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise Fail(f"{method} {found[0]}{more}", f"ACP v1 schema § {type_name}")


def _updates_text(updates: Sequence[Mapping[str, Any]]) -> str:
    kinds: dict[str, int] = {}
    for update in updates:
        kind = str(update.get("sessionUpdate"))
        kinds[kind] = kinds.get(kind, 0) + 1
    return ", ".join(f"{kind} x{n}" for kind, n in kinds.items()) or "no updates"


# The checks, in the order of CHECKS.


def _initialize(run: Run) -> str:
    agent = run.main = run.spawn("main")
    answer = run.call(agent, "initialize", run.initialize_params(1))
    error = error_of(answer)
    if error is not None:
        raise Fail(f"initialize (protocolVersion 1) answered an error: {error_text(error)}")
    result = answer.obj.get("result")
    result = result if isinstance(result, dict) else {}
    caps = result.get("agentCapabilities")
    run.caps = caps if isinstance(caps, dict) else {}
    info = result.get("agentInfo")
    info = info if isinstance(info, dict) else {}
    methods = [m.get("id") for m in result.get("authMethods") or () if isinstance(m, dict)]
    run.agent.update(
        name=info.get("name"),
        version=info.get("version"),
        protocolVersion=result.get("protocolVersion"),
        agentCapabilities=run.caps,
        authMethods=methods,
    )
    version = result.get("protocolVersion")
    run.initialized = version == 1
    if version != 1:
        raise Fail(
            f"initialize with protocolVersion 1 answered protocolVersion {short(version)}: "
            "an agent supporting v1 must answer 1 (this run speaks v1 only)"
        )
    _well_formed(answer, "InitializeResponse", "initialize")
    session_caps = run.caps.get("sessionCapabilities")
    offered = sorted(session_caps) if isinstance(session_caps, dict) else []
    return (
        f"protocolVersion 1, agent {info.get('name')} {info.get('version')}, "
        f"loadSession {bool(run.caps.get('loadSession'))}, "
        f"sessionCapabilities [{', '.join(offered)}], authMethods {methods}"
    )


def _version(run: Run, asked: int) -> str:
    label = "newer" if asked > 1 else "older"
    agent = run.spawn(f"version-{label}")
    try:
        answer = run.call(agent, "initialize", run.initialize_params(asked))
    except NoAnswer as missing:
        raise Fail(f"timeout: {missing} (protocolVersion {asked})") from missing
    except AgentExited as gone:
        raise Fail(
            f"the agent exited (code {agent.wait_exit(1.0)}) without answering initialize "
            f"with protocolVersion {asked}"
            + (f"; stderr: {agent.last_stderr()}" if agent.last_stderr() else "")
        ) from gone
    finally:
        agent.stop(grace=1.0)
    error = error_of(answer)
    if error is not None:
        raise Fail(
            f"initialize with protocolVersion {asked} answered an error ({error_text(error)}): "
            "the agent must answer its latest supported version"
        )
    result = answer.obj.get("result")
    version = result.get("protocolVersion") if isinstance(result, dict) else None
    if not isinstance(version, int) or isinstance(version, bool):
        raise Fail(f"initialize answered no protocolVersion: {short(answer.raw)}")
    if asked > 1 and version == asked:
        raise Fail(
            f"initialize with protocolVersion {asked} answered {version}: the version asked "
            "for, echoed, not the agent's latest supported version"
        )
    if asked > 1 and version < 1:
        raise Fail(
            f"initialize with protocolVersion {asked} answered {version}, older than the "
            "v1 it answers to v1: not its latest supported version"
        )
    return f"protocolVersion {asked} answered with {version}"


def _session_new(run: Run) -> str:
    agent = run.connect()
    answer = run.new_session(agent)
    error = error_of(answer)
    if error is not None:
        run.session_new_error = f"session/new answered {error_text(error)}"
        if error.get("code") == -32000:
            raise Skip(
                f"session/new answered {error_text(error)} (authentication required); give "
                "the agent a model (--model-endpoint) or its credentials"
            )
        raise Fail(f"session/new answered an error: {error_text(error)}")
    result = answer.obj.get("result")
    sid = result.get("sessionId") if isinstance(result, dict) else None
    if not isinstance(sid, str):
        run.session_new_error = "session/new answered no sessionId"
        raise Fail(f"session/new answered no sessionId: {short(answer.raw)}")
    assert isinstance(result, dict)
    run.session = sid
    run.can_create = True
    modes = result.get("modes")
    options = result.get("configOptions")
    mode_ids = [
        m.get("id") for m in (modes or {}).get("availableModes") or () if isinstance(m, dict)
    ]
    option_ids = [o.get("id") for o in options or () if isinstance(o, dict)]
    _well_formed(answer, "NewSessionResponse", "session/new")
    return f"session {sid} in {run.project}; modes {mode_ids}; configOptions {option_ids}"


def _scratch(run: Run) -> tuple[AgentProcess, Mapping[str, Any]]:
    """A session of its own for set_mode, set_config_option and close."""
    agent, _ = run.main_session()
    if run.scratch is None:
        answer = run.new_session(agent)
        result = answer.obj.get("result")
        if error_of(answer) is not None or not isinstance(result, dict):
            raise Fail(f"a second session/new answered {short(answer.raw)}")
        run.scratch = result
    return agent, run.scratch


def _set_mode(run: Run) -> str:
    agent, session = _scratch(run)
    modes = session.get("modes")
    available = [
        m.get("id")
        for m in (modes.get("availableModes") or () if isinstance(modes, dict) else ())
        if isinstance(m, dict) and isinstance(m.get("id"), str)
    ]
    if not available:
        raise Skip("session/new returned no modes")
    assert isinstance(modes, dict)
    current = modes.get("currentModeId")
    mode = next((m for m in available if m != current), available[0])
    answer = run.call(
        agent, "session/set_mode", {"sessionId": session["sessionId"], "modeId": mode}
    )
    error = error_of(answer)
    if error is not None:
        raise Fail(f"session/set_mode to {mode!r} (offered) answered {error_text(error)}")
    return f"mode {current!r} -> {mode!r} answered"


def _select_values(option: Mapping[str, Any]) -> list[str]:
    values: list[str] = []
    for item in option.get("options") or ():
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("value"), str):
            values.append(item["value"])
        for inner in item.get("options") or ():  # a group
            if isinstance(inner, dict) and isinstance(inner.get("value"), str):
                values.append(inner["value"])
    return values


def _set_config(run: Run) -> str:
    agent, session = _scratch(run)
    options = [o for o in session.get("configOptions") or () if isinstance(o, dict)]
    if not options:
        raise Skip("session/new returned no configOptions")
    option = options[0]
    current = option.get("currentValue")
    params: dict[str, object] = {"sessionId": session["sessionId"], "configId": option.get("id")}
    if option.get("type") == "boolean":
        params.update(type="boolean", value=not current)
    else:
        values = _select_values(option)
        params["value"] = next((v for v in values if v != current), current)
    answer = run.call(agent, "session/set_config_option", params)
    error = error_of(answer)
    if error is not None:
        raise Fail(
            f"session/set_config_option {option.get('id')!r} = {params['value']!r} "
            f"(offered) answered {error_text(error)}"
        )
    _well_formed(answer, "SetSessionConfigOptionResponse", "session/set_config_option")
    return f"{option.get('id')!r}: {current!r} -> {params['value']!r} answered"


def _prompt(run: Run) -> str:
    turn = run.prompt("prompt", "text", "Say hello in one short sentence.")
    return f"stopReason {turn.stop_reason} after {_updates_text(turn.updates)}"


def _resource_link(run: Run) -> str:
    readme = run.project / "README.md"
    turn = run.prompt(
        "prompt-resource-link", "text", "Summarize the linked file in one sentence.", link=readme
    )
    return f"text + resource_link {readme.name}: stopReason {turn.stop_reason}"


def _tool_calls(turn: Turn) -> list[str]:
    return [str(u.get("toolCallId")) for u in turn.updates if u.get("sessionUpdate") == "tool_call"]


def _permission(run: Run, check: str, verdict: Literal["allow", "reject"]) -> str:
    path = run.project / ("allowed.txt" if verdict == "allow" else "refused.txt")
    run.permission = verdict
    turn = run.prompt(
        check,
        "write",
        f"Create the file {path} containing the line 'written by acpwire check'.",
        path=path,
    )
    asked = turn.asked("session/request_permission")
    written = path.is_file() and path.read_text() == CONTENT
    if not asked:
        wrote = "; it wrote the file without asking" if written else ""
        raise Skip(f"the agent asked no permission in this turn{wrote}{run._model_said(check)}")
    request = asked[0]
    options = [o for o in request.get("options") or () if isinstance(o, dict)]
    kinds = (
        ("allow_once", "allow_always") if verdict == "allow" else ("reject_once", "reject_always")
    )
    if not any(o.get("kind") in kinds for o in options):
        offered = [o.get("kind") for o in options]
        raise Skip(f"the permission request offered no {' or '.join(kinds)} option ({offered})")
    tool = request.get("toolCall")
    title = tool.get("title") if isinstance(tool, dict) else None
    evidence = (
        f"asked about {short(title, 60) if isinstance(title, str) else 'an untitled tool call'!r} ({len(options)} options), answered {verdict}; "
        f"stopReason {turn.stop_reason}; tool calls {_tool_calls(turn)}"
    )
    if verdict == "reject" and written:
        raise Fail(
            f"the client rejected the write of {path.name}, and the agent wrote it anyway; "
            f"{evidence}"
        )
    return evidence + ("; file written" if written else "; file not written")


def _cancel(run: Run) -> str:
    turn = run.prompt("cancel", "slow", "Count slowly to one hundred.", cancel=True)
    if not turn.cancel_sent:
        raise Skip(f"the turn ended (stopReason {turn.stop_reason}) before it could be cancelled")
    if turn.stop_reason != "cancelled":
        raise Fail(
            f"session/cancel sent during the turn, then session/prompt answered stopReason "
            f"{turn.stop_reason!r}, not 'cancelled': {short(turn.answer.raw if turn.answer else '')}"
        )
    agent, _ = run.main_session()
    late: list[Mapping[str, Any]] = []
    _settle(agent, lambda incoming: late.append(incoming.obj))
    return f"cancelled after {_updates_text(turn.updates)}"


def _settle(agent: AgentProcess, on: Callable[[Incoming], None], *, ending: bool = False) -> None:
    """Read what the agent writes for a short while (the checker sees it); ``ending``:
    its output may end meanwhile."""
    started = time.monotonic()
    with contextlib.suppress(NoAnswer, *((AgentExited,) if ending else ())):
        while True:
            on(agent.next(started + SETTLE_S, "late messages", started))


def _refused(run: Run, check: str) -> str:
    if check == "fs-refused":
        run.refuse_fs = True
        path = run.project / "fs-refused.txt"
        turn = run.prompt(check, "write", f"Create the file {path} containing one line.", path=path)
        calls = [name for name, _ in turn.requests if name.startswith("fs/")]
        what = "fs/*"
    else:
        turn = run.prompt(check, "shell", "Run the command `echo acpwire-check` in a terminal.")
        calls = [name for name, _ in turn.requests if name.startswith("terminal/")]
        what = "terminal/create"
    if not calls:
        raise Skip(
            f"the agent sent no {what} request in this turn although offered"
            f"{run._model_said(check)}"
        )
    agent, _ = run.main_session()
    alive = run.still_serving(agent, f"refusing {calls[0]}")
    return f"refused {', '.join(calls)}; the turn ended with {turn.stop_reason}; {alive}"


def _load(run: Run) -> str:
    if run.caps.get("loadSession") is not True:
        raise Skip("agentCapabilities.loadSession is not advertised")
    agent, sid = run.main_session()
    replay: list[Mapping[str, Any]] = []
    late: list[Mapping[str, Any]] = []

    def collect(into: list[Mapping[str, Any]]) -> Callable[[Incoming], None]:
        def take(incoming: Incoming) -> None:
            params = incoming.obj.get("params")
            if incoming.method == "session/update" and isinstance(params, dict):
                update = params.get("update")
                if params.get("sessionId") == sid and isinstance(update, dict):
                    into.append(update)

        return take

    answer = run.call(
        agent,
        "session/load",
        {"sessionId": sid, "cwd": str(run.project), "mcpServers": []},
        on=collect(replay),
    )
    error = error_of(answer)
    if error is not None:
        raise Fail(f"session/load of session {sid} answered {error_text(error)}")
    _settle(agent, collect(late))
    history = [u for u in late if u.get("sessionUpdate") in TURN_OUTPUT]
    if history:
        raise Fail(
            f"session/load answered, then {_updates_text(history)} for the session: the "
            "replay must come before the answer"
        )
    if run.turns and not any(u.get("sessionUpdate") in TURN_OUTPUT for u in replay):
        raise Fail(
            f"session/load of a session with {run.turns} turns replayed no conversation "
            f"before its answer ({_updates_text(replay)})"
        )
    return f"{_updates_text(replay)} replayed before the answer ({run.turns} turns before)"


def _session_marker(run: Run, name: str) -> bool:
    session_caps = run.caps.get("sessionCapabilities")
    return isinstance(session_caps, dict) and isinstance(session_caps.get(name), dict)


def _resume(run: Run) -> str:
    if not _session_marker(run, "resume"):
        raise Skip("agentCapabilities.sessionCapabilities.resume is not advertised")
    agent, sid = run.main_session()
    answer = run.call(
        agent, "session/resume", {"sessionId": sid, "cwd": str(run.project), "mcpServers": []}
    )
    error = error_of(answer)
    if error is not None:
        raise Fail(f"session/resume of session {sid} answered {error_text(error)}")
    return f"session {sid} resumed"


def _fork(run: Run) -> str:
    if not _session_marker(run, "fork"):
        raise Skip("agentCapabilities.sessionCapabilities.fork is not advertised")
    agent, sid = run.main_session()
    answer = run.call(
        agent, "session/fork", {"sessionId": sid, "cwd": str(run.project), "mcpServers": []}
    )
    error = error_of(answer)
    if error is not None:
        raise Fail(f"session/fork of session {sid} answered {error_text(error)}")
    result = answer.obj.get("result")
    forked = result.get("sessionId") if isinstance(result, dict) else None
    if forked == sid:
        raise Fail(f"session/fork of session {sid} answered the same sessionId")
    return f"session {sid} forked as {forked}"


def _list(run: Run) -> str:
    if not _session_marker(run, "list"):
        raise Skip("agentCapabilities.sessionCapabilities.list is not advertised")
    agent, _ = run.main_session()
    answer = run.call(agent, "session/list", {})
    error = error_of(answer)
    if error is not None:
        raise Fail(f"session/list answered {error_text(error)}")
    _well_formed(answer, "ListSessionsResponse", "session/list")
    result = answer.obj.get("result")
    sessions = result.get("sessions") if isinstance(result, dict) else None
    return f"{len(sessions) if isinstance(sessions, list) else 0} sessions listed"


def _close(run: Run) -> str:
    if not _session_marker(run, "close"):
        raise Skip("agentCapabilities.sessionCapabilities.close is not advertised")
    agent, session = _scratch(run)
    sid = session["sessionId"]
    answer = run.call(agent, "session/close", {"sessionId": sid})
    error = error_of(answer)
    if error is not None:
        raise Fail(f"session/close of session {sid} answered {error_text(error)}")
    run.scratch = None
    return f"session {sid} closed"


def _bad_input(run: Run, check: str) -> str:
    agent = run.connect()
    if check == "malformed-json":
        agent.write_line(
            '{"jsonrpc": "2.0", "id": 900, "method": "session/new", "params": {', deliberate=True
        )
        started = time.monotonic()
        deadline = started + run.options.timeout
        while True:
            incoming = agent.next(deadline, "an answer to a line that is not JSON", started)
            if incoming.is_response:
                break
        error, msg_id = error_of(incoming), incoming.obj.get("id")
        if error is None or error.get("code") != -32700 or msg_id is not None:
            raise Fail(
                "a line that is not JSON was answered "
                f"{short(incoming.raw)}: expected error -32700 (Parse error) with id null"
            )
        sent = "a line that is not JSON"
    elif check == "unknown-method":
        incoming = run.call(agent, "acpwire_check/no_such_method", {}, deliberate=True)
        error = error_of(incoming)
        if error is None or error.get("code") != -32601:
            raise Fail(
                f"a request for an unknown method was answered {short(incoming.raw)}: "
                "expected error -32601 (Method not found)"
            )
        sent = "an unknown method"
    else:
        incoming = run.call(agent, "session/new", {"cwd": 42, "mcpServers": []}, deliberate=True)
        error = error_of(incoming)
        if error is None or error.get("code") != -32602:
            raise Fail(
                f'session/new with "cwd": 42 was answered {short(incoming.raw)}: expected '
                "error -32602 (Invalid params)"
            )
        sent = "invalid params"
    alive = run.still_serving(agent, sent)
    return f"{sent} answered {error_text(error)}; {alive}"


def _end_of_input(run: Run) -> str:
    agent = run.connect()
    agent.close_input()
    started = time.monotonic()
    _settle(agent, lambda _: None, ending=True)
    code = agent.wait_exit(max(0.0, run.options.exit_timeout - (time.monotonic() - started)))
    seconds = time.monotonic() - started
    if code is None:
        raise Fail(
            f"stdin closed, and the agent was still running {run.options.exit_timeout:g} s "
            "later (--exit-timeout)"
        )
    run.main = None
    agent.stop(grace=0.5)
    return f"exited with code {code} {seconds:.1f} s after its stdin closed"


BODIES: Final[dict[str, Callable[[Run], str]]] = {
    "initialize": _initialize,
    "protocol-version-newer": lambda run: _version(run, NEWER_VERSION),
    "protocol-version-older": lambda run: _version(run, OLDER_VERSION),
    "session-new": _session_new,
    "session-set-mode": _set_mode,
    "session-set-config-option": _set_config,
    "prompt": _prompt,
    "prompt-resource-link": _resource_link,
    "permission-allow": lambda run: _permission(run, "permission-allow", "allow"),
    "permission-reject": lambda run: _permission(run, "permission-reject", "reject"),
    "cancel": _cancel,
    "fs-refused": lambda run: _refused(run, "fs-refused"),
    "terminal-refused": lambda run: _refused(run, "terminal-refused"),
    "session-load": _load,
    "session-resume": _resume,
    "session-fork": _fork,
    "session-list": _list,
    "session-close": _close,
    "malformed-json": lambda run: _bad_input(run, "malformed-json"),
    "unknown-method": lambda run: _bad_input(run, "unknown-method"),
    "invalid-params": lambda run: _bad_input(run, "invalid-params"),
    "end-of-input": _end_of_input,
}
assert list(BODIES) == [check.name for check in CHECKS]
