"""A conformance run: an ACP agent spawned as an editor would, driven through what it
advertises by a scripted client, every message both ways checked by the
:class:`~acpwire.conformance.ProtocolChecker`.

:func:`run_checks` takes :class:`RunOptions` (the agent's command, which checks, bounds,
how the agent reads a model endpoint) and returns a :class:`RunReport`: one
:class:`CheckResult` per check of :data:`CHECKS` that ran, each PASS, FAIL or SKIP with
one line of evidence and the spec section it rests on. Rendering is :mod:`.report`.

Never flaky: every wait is bounded (``timeout``; ``exit_timeout`` for the end of input)
and a wait that runs out is a FAIL naming what was waited for. A check that needs the
agent to act (a turn, a tool call, a permission request) runs against a loopback scripted
model (:mod:`._model` behind :class:`~acpwire.devtools.fake_llm.FakeLLM`, on 127.0.0.1)
when the options say how the agent is given an endpoint, and is SKIP otherwise. Nothing
leaves the machine.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import tempfile
import time
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final, Literal

from acp_v1 import models as _models

from ._model import CONTENT, ScriptedModel, marker
from ._repairs import repairs
from ._wire import AgentExited, AgentProcess, Incoming, NoAnswer
from .checker import Direction, Finding

__all__ = [
    "CHECKS",
    "AgentStartError",
    "Check",
    "CheckResult",
    "RunOptions",
    "RunReport",
    "Status",
    "run_checks",
]

Status = Literal["PASS", "FAIL", "SKIP"]

STOP_REASONS: Final = frozenset(typing.get_args(_models.KnownStopReason.__value__))
"""The stop reasons of the protocol (the bindings' known values)."""

_INIT: Final = "ACP v1 initialization"
_SETUP: Final = "ACP v1 session-setup"
_TURN: Final = "ACP v1 prompt-turn"
_TOOLS: Final = "ACP v1 tool-calls"
_RPC: Final = "JSON-RPC 2.0 § 5.1 Error object"
NEWER_VERSION: Final = 1000
"""The protocol version the newer-version probe asks for: no agent supports it."""
OLDER_VERSION: Final = 0
REFUSAL: Final = {"code": -32603, "message": "Refused by the client (acpwire check)"}
"""The client's error answer when it refuses an fs or terminal request."""
_SETTLE_S: Final = 0.5
"""How long the run keeps reading after a session/load answer for late replay."""


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    what: str
    spec: str
    needs_model: bool = False


CHECKS: Final[tuple[Check, ...]] = (
    Check(
        "initialize",
        "initialize with protocolVersion 1 is answered with version 1 and well-formed "
        "agentCapabilities, agentInfo and authMethods",
        f"{_INIT} § Protocol version, § Capabilities",
    ),
    Check(
        "protocol-version-newer",
        f"a client asking for protocolVersion {NEWER_VERSION} (newer than any) gets a result "
        "naming the agent's latest version, not an error and not the version asked for",
        f"{_INIT} § Protocol version",
    ),
    Check(
        "protocol-version-older",
        f"a client asking for protocolVersion {OLDER_VERSION} (older than v1) gets a result "
        "naming a version (the agent's latest when it does not support the one asked for), "
        "not an error",
        f"{_INIT} § Protocol version",
    ),
    Check(
        "session-new",
        "session/new with a real temporary cwd and no MCP servers answers a sessionId (and "
        "well-formed modes and configOptions); no update for the session before the answer",
        f"{_SETUP} § Creating a Session",
    ),
    Check(
        "session-set-mode",
        "where session/new returned modes: session/set_mode to another available mode "
        "(in a session of its own) is answered",
        f"{_SETUP} § Session Modes (session-modes)",
    ),
    Check(
        "session-set-config-option",
        "where session/new returned configOptions: session/set_config_option (another value "
        "of the first option, in a session of its own) answers the options",
        "ACP v1 session-config-options § Setting a Config Option",
    ),
    Check(
        "prompt",
        "a prompt turn: every update well typed, the answer a valid stop reason",
        f"{_TURN} § 3. Agent Reports Output, § 4. Check for Completion",
        needs_model=True,
    ),
    Check(
        "permission-allow",
        "a turn whose tool call (a file write in the cwd) asks permission, answered with an "
        "allow option: the request well formed, the tool call and its updates consistent, "
        "the turn ends with a valid stop reason",
        f"{_TOOLS} § Requesting Permission, § Permission Options",
        needs_model=True,
    ),
    Check(
        "permission-reject",
        "the same, answered with a reject option: the turn ends with a valid stop reason "
        "and the file is not written",
        f"{_TOOLS} § Requesting Permission, § Permission Options",
        needs_model=True,
    ),
    Check(
        "cancel",
        "session/cancel during a streaming turn: the prompt is answered with stopReason "
        "cancelled, no turn output after it",
        f"{_TURN} § Cancellation",
        needs_model=True,
    ),
    Check(
        "fs-refused",
        "with fs offered, the client refuses the agent's fs/* request (an error answer): "
        "the turn still ends with a valid stop reason and the agent goes on serving",
        "ACP v1 file-system; JSON-RPC 2.0 § 5 Response object",
        needs_model=True,
    ),
    Check(
        "terminal-refused",
        "with terminal offered, the client refuses terminal/create: the turn still ends "
        "with a valid stop reason and the agent goes on serving",
        "ACP v1 terminals; JSON-RPC 2.0 § 5 Response object",
        needs_model=True,
    ),
    Check(
        "session-load",
        "where loadSession is advertised: session/load of the run's session replays its "
        "conversation as session/update before the answer, nothing of it after",
        f"{_SETUP} § Loading Sessions",
    ),
    Check(
        "session-resume",
        "where sessionCapabilities.resume is advertised: session/resume is answered",
        f"{_SETUP} § Resuming Sessions",
    ),
    Check(
        "session-fork",
        "where sessionCapabilities.fork is advertised: session/fork answers a new sessionId",
        "ACP v1 schema § ForkSessionRequest (unstable)",
    ),
    Check(
        "session-list",
        "where sessionCapabilities.list is advertised: session/list is answered",
        "ACP v1 session-list § Listing Sessions",
    ),
    Check(
        "session-close",
        "where sessionCapabilities.close is advertised: session/close is answered",
        f"{_SETUP} § Closing Active Sessions",
    ),
    Check(
        "malformed-json",
        "a line that is not JSON is answered with error -32700 and id null; the agent still serves",
        f"{_RPC}; JSON-RPC 2.0 § 5 Response object",
    ),
    Check(
        "unknown-method",
        "a request for a method no one defines is answered with error -32601; the agent "
        "still serves",
        f"{_RPC}; ACP v1 extensibility § Extension Methods",
    ),
    Check(
        "invalid-params",
        "session/new with params that do not validate (cwd a number) is answered with "
        "error -32602; the agent still serves",
        f"{_RPC}; ACP v1 schema § NewSessionRequest",
    ),
    Check(
        "end-of-input",
        "when the client closes the agent's stdin, the agent exits within the bound",
        "ACP v1 transports § stdio",
    ),
)
"""Every check, in the order a run makes them."""

BY_NAME: Final = {check.name: check for check in CHECKS}
_ALWAYS: Final = frozenset({"initialize", "session-new"})
"""Checks whose work later checks need: made even when not selected (not reported)."""


@dataclass(slots=True)
class CheckResult:
    name: str
    status: Status
    evidence: str
    spec: str
    seconds: float = 0.0

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "status": self.status,
            "evidence": self.evidence,
            "spec": self.spec,
            "seconds": round(self.seconds, 3),
        }


@dataclass(slots=True)
class RunReport:
    agent: dict[str, object]
    """The command, and what its initialize answer said (name, version, capabilities)."""
    checks: list[CheckResult]
    seconds: float
    model: str | None
    """The loopback model's base URL, or None for a model-free run."""

    def count(self, status: Status) -> int:
        return sum(1 for check in self.checks if check.status == status)

    @property
    def ok(self) -> bool:
        return self.count("FAIL") == 0

    @property
    def summary(self) -> dict[str, object]:
        return {
            "pass": self.count("PASS"),
            "fail": self.count("FAIL"),
            "skip": self.count("SKIP"),
            "seconds": round(self.seconds, 2),
            "model": self.model,
        }

    def to_json(self) -> dict[str, object]:
        return {
            "checks": [check.to_json() for check in self.checks],
            "agent": self.agent,
            "summary": self.summary,
        }


class AgentStartError(OSError):
    """The agent's command cannot be started."""


@dataclass(frozen=True, slots=True)
class RunOptions:
    command: Sequence[str]
    """The agent's argv."""
    only: frozenset[str] | None = None
    """Run only these checks (names of :data:`CHECKS`); None: all."""
    skip: frozenset[str] = frozenset()
    timeout: float = 15.0
    """Seconds any one answer (a turn's included) may take."""
    exit_timeout: float = 5.0
    """Seconds the agent has to exit once its stdin is closed."""
    agent_env: Mapping[str, str] = field(default_factory=dict)
    """Variables added to the agent's environment (which is this process's otherwise).
    ``{base_url}``, ``{api_key}``, ``{model}`` (the loopback model) and ``{tmp}`` (a
    scratch folder of the run) are replaced in the values; a value naming ``{base_url}``
    starts the model."""
    model_endpoint: bool = False
    """Start the loopback model and give it as ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``."""
    hermes_home: bool = False
    """Start the loopback model and give it to Hermes: a scratch ``HERMES_HOME`` whose
    ``config.yaml`` names it as the custom provider."""
    model_name: str = "acpwire-check-model"
    write_tool: str | None = None
    """The agent's file-writing tool, when its name is not a usual one."""
    shell_tool: str | None = None
    trace: str | None = None
    """Write every line either side wrote here (JSON Lines)."""
    agent_log: str | None = None
    """Write the agent's stderr here (every process of the run)."""
    cwd: str | None = None
    """The agent process's working directory (default: this process's)."""

    @property
    def wants_model(self) -> bool:
        return (
            self.model_endpoint
            or self.hermes_home
            or any("{base_url}" in value for value in self.agent_env.values())
        )

    def selected(self, name: str) -> bool:
        return (self.only is None or name in self.only) and name not in self.skip


class _Fail(Exception):
    def __init__(self, evidence: str, spec: str | None = None) -> None:
        super().__init__(evidence)
        self.evidence = evidence
        self.spec = spec


class _Skip(Exception):
    pass


@dataclass(slots=True)
class _Turn:
    answer: Incoming | None
    """The prompt's answer (None: the turn was not awaited to its end)."""
    updates: list[Mapping[str, Any]] = field(default_factory=list)
    requests: list[tuple[str, Mapping[str, Any]]] = field(default_factory=list)
    cancel_sent: bool = False

    @property
    def result(self) -> Mapping[str, Any]:
        value = self.answer.obj.get("result") if self.answer is not None else None
        return value if isinstance(value, dict) else {}

    @property
    def stop_reason(self) -> object:
        return self.result.get("stopReason")

    def asked(self, method: str) -> list[Mapping[str, Any]]:
        return [params for name, params in self.requests if name == method]


def _short(value: object, limit: int = 140) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _error(answer: Incoming) -> Mapping[str, Any] | None:
    error = answer.obj.get("error")
    return error if isinstance(error, dict) else None


def _error_text(error: Mapping[str, Any]) -> str:
    return f"{error.get('code')} {_short(error.get('message', ''), 80)}"


class _Run:
    def __init__(self, options: RunOptions, model: ScriptedModel | None, base_url: str | None):
        self.options = options
        self.model = model
        self.base_url = base_url
        self.results: dict[str, CheckResult] = {}
        self.agent: dict[str, object] = {"command": list(options.command)}
        self.root = Path(tempfile.mkdtemp(prefix="acpwire-check-")).resolve()
        self.project = self.root / "project"
        self.project.mkdir()
        (self.project / "README.md").write_text("A scratch project of acpwire check.\n")
        self.env = self._environment()
        self._trace: IO[str] | None = open(options.trace, "w") if options.trace else None  # noqa: SIM115
        self._log: IO[str] | None = open(options.agent_log, "a") if options.agent_log else None  # noqa: SIM115
        self._started = time.monotonic()
        self._current: list[tuple[Direction, str, Finding]] | None = None
        self._check = ""
        self.initialized = False
        self.can_create = False
        """session/new worked: the run's own way to see that the agent still serves."""
        self.main: AgentProcess | None = None
        self.caps: Mapping[str, Any] = {}
        self.session: str | None = None
        self.session_new_error: str | None = None
        self.turns = 0
        self.scratch: Mapping[str, Any] | None = None
        # The client's behaviour towards the agent's requests, set per check.
        self.permission: Literal["allow", "reject", "cancelled"] = "allow"
        self.refuse_fs = False
        self._turn: _Turn | None = None

    # Set-up.

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        scratch = self.root / "agent"
        scratch.mkdir()
        values = {
            "{base_url}": self.base_url or "",
            "{api_key}": "sk-acpwire-check",
            "{model}": self.options.model_name,
            "{tmp}": str(scratch),
        }
        if self.base_url is not None and self.options.model_endpoint:
            env["OPENAI_BASE_URL"] = self.base_url
            env["OPENAI_API_KEY"] = values["{api_key}"]
        if self.base_url is not None and self.options.hermes_home:
            home = scratch / "hermes-home"
            home.mkdir()
            (home / "config.yaml").write_text(
                "model:\n"
                "  provider: custom\n"
                f"  base_url: {self.base_url}\n"
                f"  default: {self.options.model_name}\n"
                f"  api_key: {values['{api_key}']}\n"
                "  context_length: 131072\n"
                "approvals:\n"
                "  mode: manual\n"
            )
            env["HERMES_HOME"] = str(home)
        for key, template in self.options.agent_env.items():
            value = template
            for name, replacement in values.items():
                value = value.replace(name, replacement)
            env[key] = value
        return env

    def close(self) -> None:
        for stream in (self._trace, self._log):
            if stream is not None:
                stream.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def _sink(self, label: str, direction: Direction, raw: str, findings: list[Finding]) -> None:
        violations = [f for f in findings if f.level == "violation"]
        if self._current is not None:
            self._current.extend((direction, raw, f) for f in violations)
        if self._trace is not None:
            record: dict[str, object] = {
                "t": round(time.monotonic() - self._started, 6),
                "dir": direction,
                "raw": raw,
                "check": self._check,
                "agent": label,
            }
            if findings:
                record["findings"] = [f.to_json() for f in findings]
            self._trace.write(json.dumps(record, ensure_ascii=False) + "\n")
            self._trace.flush()

    def spawn(self, label: str) -> AgentProcess:
        agent = AgentProcess(
            self.options.command,
            self.env,
            self.options.cwd,
            lambda direction, raw, findings: self._sink(label, direction, raw, findings),
            self._handle,
            stderr_log=self._log,
        )
        try:
            agent.start()
        except OSError as exc:
            raise AgentStartError(
                exc.errno, f"cannot start {self.options.command[0]}: {exc}"
            ) from exc
        return agent

    # The client's side: what it answers to the agent's requests.

    def _handle(self, method: str, params: Mapping[str, Any]) -> tuple[str, object]:
        if self._turn is not None:
            self._turn.requests.append((method, params))
        if method == "session/request_permission":
            return "result", {"outcome": self._choose(params)}
        if method.startswith("fs/"):
            return self._fs(method, params)
        if method.startswith("terminal/"):
            return "error", REFUSAL
        return "error", {"code": -32601, "message": f"Method not found: {method}"}

    def _choose(self, params: Mapping[str, Any]) -> dict[str, object]:
        if self.permission == "cancelled" or (self._turn is not None and self._turn.cancel_sent):
            return {"outcome": "cancelled"}
        kinds = ("allow_once", "allow_always")
        if self.permission == "reject":
            kinds = ("reject_once", "reject_always")
        options = [o for o in params.get("options") or () if isinstance(o, dict)]
        for kind in kinds:
            for option in options:
                if option.get("kind") == kind and isinstance(option.get("optionId"), str):
                    return {"outcome": "selected", "optionId": option["optionId"]}
        return {"outcome": "cancelled"}

    def _fs(self, method: str, params: Mapping[str, Any]) -> tuple[str, object]:
        if self.refuse_fs:
            return "error", REFUSAL
        path = Path(str(params.get("path", "")))
        if not path.is_absolute() or not path.resolve().is_relative_to(self.project):
            return "error", {"code": -32602, "message": f"{path}: outside the project"}
        if method == "fs/write_text_file":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(str(params.get("content", "")))
            return "result", {}
        if method == "fs/read_text_file":
            if not path.is_file():
                return "error", {"code": -32002, "message": f"Resource not found: {path}"}
            lines = path.read_text().splitlines(keepends=True)
            line = params.get("line")
            start = line - 1 if isinstance(line, int) and line > 0 else 0
            limit = params.get("limit")
            end = start + limit if isinstance(limit, int) and limit >= 0 else None
            return "result", {"content": "".join(lines[start:end])}
        return "error", {"code": -32601, "message": f"Method not found: {method}"}

    # Talking to the agent.

    def call(
        self,
        agent: AgentProcess,
        method: str,
        params: object,
        *,
        deliberate: bool = False,
        on: Callable[[Incoming], None] | None = None,
    ) -> Incoming:
        """Send a request; its answer (everything before it goes to ``on``)."""
        msg_id = agent.request(method, params, deliberate=deliberate)
        return self.answer_to(agent, msg_id, f"the answer to {method}", on=on)

    def answer_to(
        self,
        agent: AgentProcess,
        msg_id: object,
        what: str,
        *,
        on: Callable[[Incoming], None] | None = None,
        timeout: float | None = None,
    ) -> Incoming:
        started = time.monotonic()
        deadline = started + (self.options.timeout if timeout is None else timeout)
        while True:
            incoming = agent.next(deadline, what, started)
            if incoming.is_response and incoming.obj.get("id") == msg_id:
                return incoming
            if on is not None:
                on(incoming)

    def initialize_params(self, version: int) -> dict[str, object]:
        return {
            "protocolVersion": version,
            "clientCapabilities": {
                "fs": {"readTextFile": True, "writeTextFile": True},
                "terminal": True,
            },
            "clientInfo": {"name": "acpwire-check", "version": "1"},
        }

    def new_session(self, agent: AgentProcess) -> Incoming:
        return self.call(agent, "session/new", {"cwd": str(self.project), "mcpServers": []})

    def connect(self) -> AgentProcess:
        """The main connection, started again (initialize, session/new) when a check
        left it ended or stuck."""
        if self.main is not None and not self.main.ended:
            return self.main
        if self.main is not None:  # it ended although its input is open
            code, tail = self.main.wait_exit(1.0), self.main.last_stderr()
            self.main.stop(grace=0.5)
            self.main = None
            raise _Fail(
                f"the agent had exited (code {code}) after the previous check"
                + (f"; its last stderr line: {tail}" if tail else "")
            )
        self.main = self.spawn("main")
        answer = self.call(self.main, "initialize", self.initialize_params(1))
        if _error(answer) is not None:
            raise _Fail(
                f"initialize (restarting the agent) answered {_error_text(_error(answer) or {})}"
            )
        self.session, self.scratch = None, None  # the old process's sessions are gone
        self.turns = 0
        return self.main

    def main_session(self) -> tuple[AgentProcess, str]:
        if self.session_new_error is not None:
            raise _Skip(f"no session: {self.session_new_error}")
        agent = self.connect()
        if self.session is None:
            answer = self.new_session(agent)
            session = answer.obj.get("result", {})
            sid = session.get("sessionId") if isinstance(session, dict) else None
            if not isinstance(sid, str):
                raise _Fail(f"session/new (restarting the agent) answered {_short(answer.raw)}")
            self.session = sid
        return agent, self.session

    def still_serving(self, agent: AgentProcess, after: str) -> str:
        """The agent answers a request after ``after``: session/new when it could create
        sessions, else an extension request (any answer will do)."""
        if self.can_create:
            answer = self.call(agent, "session/new", {"cwd": str(self.project), "mcpServers": []})
            if _error(answer) is not None:
                raise _Fail(
                    f"after {after}, session/new answered {_error_text(_error(answer) or {})}: "
                    "the agent no longer serves"
                )
            return "session/new still answered"
        self.call(agent, "_acpwire_check/ping", {})
        return "still answering"

    # Running a check.

    def run(self, check: str, body: Callable[[], str]) -> None:
        selected = self.options.selected(check)
        if not selected and check not in _ALWAYS:
            return
        spec = BY_NAME[check].spec
        if BY_NAME[check].needs_model and self.model is None:
            if selected:
                self.results[check] = CheckResult(
                    check,
                    "SKIP",
                    "needs the agent to act: no model endpoint given (--model-endpoint, "
                    "--agent-env with {base_url}, or --hermes-home)",
                    spec,
                )
            return
        found: list[tuple[Direction, str, Finding]] = []
        self._current, self._check = found, check
        started = time.monotonic()
        status: Status = "PASS"
        try:
            evidence = body()
        except _Fail as failed:
            status, evidence, spec = "FAIL", failed.evidence, failed.spec or spec
        except _Skip as skipped:
            status, evidence = "SKIP", str(skipped)
        except NoAnswer as missing:
            hint = self._model_said(check) if BY_NAME[check].needs_model else ""
            if self._turn is not None and self._turn.requests:
                asked = ", ".join(dict.fromkeys(name for name, _ in self._turn.requests))
                hint += f"; the agent's requests in the turn (answered): {asked}"
            status, evidence = "FAIL", f"timeout: {missing}{hint}"
            self._abandon()
        except AgentExited as gone:
            status, evidence = "FAIL", self._exited(str(gone))
        finally:
            self._current, self._turn = None, None
            self.permission, self.refuse_fs = "allow", False
        if found and status != "FAIL":
            direction, raw, finding = found[0]
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            status, spec = "FAIL", finding.spec
            evidence = f"[{finding.rule}] {finding.message}{more}; {direction}: {_short(raw, 160)}"
        if selected:
            line = " ".join(evidence.split())  # one line, whatever the agent's text held
            self.results[check] = CheckResult(check, status, line, spec, time.monotonic() - started)

    def _abandon(self) -> None:
        """A wait ran out: the main connection may be stuck; the next check starts again."""
        if self.main is not None:
            self.main.stop(grace=0.5)
            self.main = None

    def _exited(self, what: str) -> str:
        agent = self.main
        code = agent.wait_exit(1.0) if agent is not None else None
        tail = agent.last_stderr() if agent is not None else ""
        if agent is not None:
            agent.stop(grace=0.5)
        self.main = None
        return (
            f"the agent ended its output (exit code {code}) while the client waited for {what}"
            + (f"; its last stderr line: {tail}" if tail else "")
        )

    # The turns.

    def prompt(
        self,
        check: str,
        action: str,
        text: str,
        *,
        path: Path | None = None,
        cancel: bool = False,
    ) -> _Turn:
        agent, sid = self.main_session()
        turn = self._turn = _Turn(None)
        words = f"{marker(action, check, str(path) if path else None)} {text}"
        msg_id = agent.request(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": words}]}
        )
        self.turns += 1

        def seen(incoming: Incoming) -> None:
            params = incoming.obj.get("params")
            if incoming.method == "session/update" and isinstance(params, dict):
                update = params.get("update")
                if params.get("sessionId") == sid and isinstance(update, dict):
                    turn.updates.append(update)

        if cancel and not self._until_running(agent, check, msg_id, turn, seen):
            turn.cancel_sent = True
            agent.notify("session/cancel", {"sessionId": sid})
        if turn.answer is None:  # else it ended by itself before a cancel could be sent
            turn.answer = self.answer_to(agent, msg_id, "the session/prompt answer", on=seen)
        error = _error(turn.answer)
        if error is not None:
            raise _Fail(
                f"session/prompt answered an error: {_error_text(error)}{self._model_said(check)}"
            )
        reason = turn.stop_reason
        if reason not in STOP_REASONS:
            raise _Fail(
                f"session/prompt answered stopReason {_short(reason)}, not one of "
                f"{', '.join(sorted(STOP_REASONS))}: {_short(turn.answer.raw)}",
                "ACP v1 schema § StopReason; prompt-turn § Stop Reasons",
            )
        return turn

    def _until_running(
        self,
        agent: AgentProcess,
        check: str,
        msg_id: int,
        turn: _Turn,
        seen: Callable[[Incoming], None],
    ) -> bool:
        """Wait until the turn is under way, so that a cancel is sent during it: its first
        update (or request), and either the scripted model streaming this check's slow
        reply or, for an agent that does not ask the model, 0.3 s more without an answer.
        True when the prompt was answered meanwhile (the cancel would come after the turn;
        the answer is in ``turn``)."""

        def until(seconds: float, done: Callable[[], bool]) -> bool:
            started = time.monotonic()
            with contextlib.suppress(NoAnswer):
                while not done():
                    incoming = agent.next(started + seconds, "the turn to start", started)
                    if incoming.is_response and incoming.obj.get("id") == msg_id:
                        turn.answer = incoming
                        return True
                    seen(incoming)
            return False

        if until(min(5.0, self.options.timeout), lambda: bool(turn.updates or turn.requests)):
            return True
        streaming = self.model is not None and self.model.seen(check).requests > 0
        if not streaming and until(0.3, lambda: False):
            return True
        agent.drain()  # an answer already written comes before the cancel would
        return until(0.0, lambda: False) if agent.pending() else False

    def _model_said(self, check: str) -> str:
        if self.model is None:
            return ""
        seen = self.model.seen(check)
        if seen.requests == 0:
            return "; the agent never asked the model about this prompt"
        tools = ", ".join(seen.tools) or "none"
        if seen.called is None:
            return f"; no suitable tool among those offered to the model ({tools})"
        return f"; the model called {seen.called}"


def _well_formed(answer: Incoming, type_name: str, method: str) -> None:
    """FAIL when a lenient receiver had to repair the answer's result (:mod:`._repairs`)."""
    found = repairs(type_name, answer.obj.get("result"))
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise _Fail(f"{method} {found[0]}{more}", f"ACP v1 schema § {type_name}")


def _updates_text(updates: Sequence[Mapping[str, Any]]) -> str:
    kinds: dict[str, int] = {}
    for update in updates:
        kind = str(update.get("sessionUpdate"))
        kinds[kind] = kinds.get(kind, 0) + 1
    return ", ".join(f"{kind} x{n}" for kind, n in kinds.items()) or "no updates"


# The checks, in the order of CHECKS.


def _initialize(run: _Run) -> str:
    agent = run.main = run.spawn("main")
    answer = run.call(agent, "initialize", run.initialize_params(1))
    error = _error(answer)
    if error is not None:
        raise _Fail(f"initialize (protocolVersion 1) answered an error: {_error_text(error)}")
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
        raise _Fail(
            f"initialize with protocolVersion 1 answered protocolVersion {_short(version)}: "
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


def _version(run: _Run, asked: int) -> str:
    label = "newer" if asked > 1 else "older"
    agent = run.spawn(f"version-{label}")
    try:
        answer = run.call(agent, "initialize", run.initialize_params(asked))
    except NoAnswer as missing:
        raise _Fail(f"timeout: {missing} (protocolVersion {asked})") from missing
    except AgentExited as gone:
        raise _Fail(
            f"the agent exited (code {agent.wait_exit(1.0)}) without answering initialize "
            f"with protocolVersion {asked}"
            + (f"; stderr: {agent.last_stderr()}" if agent.last_stderr() else "")
        ) from gone
    finally:
        agent.stop(grace=1.0)
    error = _error(answer)
    if error is not None:
        raise _Fail(
            f"initialize with protocolVersion {asked} answered an error ({_error_text(error)}): "
            "the agent must answer its latest supported version"
        )
    result = answer.obj.get("result")
    version = result.get("protocolVersion") if isinstance(result, dict) else None
    if not isinstance(version, int) or isinstance(version, bool):
        raise _Fail(f"initialize answered no protocolVersion: {_short(answer.raw)}")
    if asked > 1 and version == asked:
        raise _Fail(
            f"initialize with protocolVersion {asked} answered {version}: the version asked "
            "for, echoed, not the agent's latest supported version"
        )
    if asked > 1 and version < 1:
        raise _Fail(
            f"initialize with protocolVersion {asked} answered {version}, older than the "
            "v1 it answers to v1: not its latest supported version"
        )
    return f"protocolVersion {asked} answered with {version}"


def _session_new(run: _Run) -> str:
    agent = run.connect()
    answer = run.new_session(agent)
    error = _error(answer)
    if error is not None:
        run.session_new_error = f"session/new answered {_error_text(error)}"
        if error.get("code") == -32000:
            raise _Skip(
                f"session/new answered {_error_text(error)} (authentication required); give "
                "the agent a model (--model-endpoint) or its credentials"
            )
        raise _Fail(f"session/new answered an error: {_error_text(error)}")
    result = answer.obj.get("result")
    sid = result.get("sessionId") if isinstance(result, dict) else None
    if not isinstance(sid, str):
        run.session_new_error = "session/new answered no sessionId"
        raise _Fail(f"session/new answered no sessionId: {_short(answer.raw)}")
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


def _scratch(run: _Run) -> tuple[AgentProcess, Mapping[str, Any]]:
    """A session of its own for set_mode, set_config_option and close."""
    agent, _ = run.main_session()
    if run.scratch is None:
        answer = run.new_session(agent)
        result = answer.obj.get("result")
        if _error(answer) is not None or not isinstance(result, dict):
            raise _Fail(f"a second session/new answered {_short(answer.raw)}")
        run.scratch = result
    return agent, run.scratch


def _set_mode(run: _Run) -> str:
    agent, session = _scratch(run)
    modes = session.get("modes")
    available = [
        m.get("id")
        for m in (modes.get("availableModes") or () if isinstance(modes, dict) else ())
        if isinstance(m, dict) and isinstance(m.get("id"), str)
    ]
    if not available:
        raise _Skip("session/new returned no modes")
    assert isinstance(modes, dict)
    current = modes.get("currentModeId")
    mode = next((m for m in available if m != current), available[0])
    answer = run.call(
        agent, "session/set_mode", {"sessionId": session["sessionId"], "modeId": mode}
    )
    error = _error(answer)
    if error is not None:
        raise _Fail(f"session/set_mode to {mode!r} (offered) answered {_error_text(error)}")
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


def _set_config(run: _Run) -> str:
    agent, session = _scratch(run)
    options = [o for o in session.get("configOptions") or () if isinstance(o, dict)]
    if not options:
        raise _Skip("session/new returned no configOptions")
    option = options[0]
    current = option.get("currentValue")
    params: dict[str, object] = {"sessionId": session["sessionId"], "configId": option.get("id")}
    if option.get("type") == "boolean":
        params.update(type="boolean", value=not current)
    else:
        values = _select_values(option)
        params["value"] = next((v for v in values if v != current), current)
    answer = run.call(agent, "session/set_config_option", params)
    error = _error(answer)
    if error is not None:
        raise _Fail(
            f"session/set_config_option {option.get('id')!r} = {params['value']!r} "
            f"(offered) answered {_error_text(error)}"
        )
    _well_formed(answer, "SetSessionConfigOptionResponse", "session/set_config_option")
    return f"{option.get('id')!r}: {current!r} -> {params['value']!r} answered"


def _prompt(run: _Run) -> str:
    turn = run.prompt("prompt", "text", "Say hello in one short sentence.")
    return f"stopReason {turn.stop_reason} after {_updates_text(turn.updates)}"


def _tool_calls(turn: _Turn) -> list[str]:
    return [str(u.get("toolCallId")) for u in turn.updates if u.get("sessionUpdate") == "tool_call"]


def _permission(run: _Run, check: str, verdict: Literal["allow", "reject"]) -> str:
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
        raise _Skip(f"the agent asked no permission in this turn{wrote}{run._model_said(check)}")
    request = asked[0]
    options = [o for o in request.get("options") or () if isinstance(o, dict)]
    kinds = (
        ("allow_once", "allow_always") if verdict == "allow" else ("reject_once", "reject_always")
    )
    if not any(o.get("kind") in kinds for o in options):
        offered = [o.get("kind") for o in options]
        raise _Skip(f"the permission request offered no {' or '.join(kinds)} option ({offered})")
    tool = request.get("toolCall")
    title = tool.get("title") if isinstance(tool, dict) else None
    evidence = (
        f"asked about {_short(title, 60) if isinstance(title, str) else 'an untitled tool call'!r} ({len(options)} options), answered {verdict}; "
        f"stopReason {turn.stop_reason}; tool calls {_tool_calls(turn)}"
    )
    if verdict == "reject" and written:
        raise _Fail(
            f"the client rejected the write of {path.name}, and the agent wrote it anyway; "
            f"{evidence}"
        )
    return evidence + ("; file written" if written else "; file not written")


def _cancel(run: _Run) -> str:
    turn = run.prompt("cancel", "slow", "Count slowly to one hundred.", cancel=True)
    if not turn.cancel_sent:
        raise _Skip(f"the turn ended (stopReason {turn.stop_reason}) before it could be cancelled")
    if turn.stop_reason != "cancelled":
        raise _Fail(
            f"session/cancel sent during the turn, then session/prompt answered stopReason "
            f"{turn.stop_reason!r}, not 'cancelled': {_short(turn.answer.raw if turn.answer else '')}"
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
            on(agent.next(started + _SETTLE_S, "late messages", started))


def _refused(run: _Run, check: str) -> str:
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
        raise _Skip(
            f"the agent sent no {what} request in this turn although offered"
            f"{run._model_said(check)}"
        )
    agent, _ = run.main_session()
    alive = run.still_serving(agent, f"refusing {calls[0]}")
    return f"refused {', '.join(calls)}; the turn ended with {turn.stop_reason}; {alive}"


def _load(run: _Run) -> str:
    if run.caps.get("loadSession") is not True:
        raise _Skip("agentCapabilities.loadSession is not advertised")
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
    error = _error(answer)
    if error is not None:
        raise _Fail(f"session/load of session {sid} answered {_error_text(error)}")
    _settle(agent, collect(late))
    history = [u for u in late if u.get("sessionUpdate") in _REPLAYED]
    if history:
        raise _Fail(
            f"session/load answered, then {_updates_text(history)} for the session: the "
            "replay must come before the answer"
        )
    if run.turns and not any(u.get("sessionUpdate") in _REPLAYED for u in replay):
        raise _Fail(
            f"session/load of a session with {run.turns} turns replayed no conversation "
            f"before its answer ({_updates_text(replay)})"
        )
    return f"{_updates_text(replay)} replayed before the answer ({run.turns} turns before)"


_REPLAYED: Final = frozenset(
    {
        "user_message_chunk",
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
        "plan",
    }
)


def _session_marker(run: _Run, name: str) -> bool:
    session_caps = run.caps.get("sessionCapabilities")
    return isinstance(session_caps, dict) and isinstance(session_caps.get(name), dict)


def _resume(run: _Run) -> str:
    if not _session_marker(run, "resume"):
        raise _Skip("agentCapabilities.sessionCapabilities.resume is not advertised")
    agent, sid = run.main_session()
    answer = run.call(
        agent, "session/resume", {"sessionId": sid, "cwd": str(run.project), "mcpServers": []}
    )
    error = _error(answer)
    if error is not None:
        raise _Fail(f"session/resume of session {sid} answered {_error_text(error)}")
    return f"session {sid} resumed"


def _fork(run: _Run) -> str:
    if not _session_marker(run, "fork"):
        raise _Skip("agentCapabilities.sessionCapabilities.fork is not advertised")
    agent, sid = run.main_session()
    answer = run.call(
        agent, "session/fork", {"sessionId": sid, "cwd": str(run.project), "mcpServers": []}
    )
    error = _error(answer)
    if error is not None:
        raise _Fail(f"session/fork of session {sid} answered {_error_text(error)}")
    result = answer.obj.get("result")
    forked = result.get("sessionId") if isinstance(result, dict) else None
    if forked == sid:
        raise _Fail(f"session/fork of session {sid} answered the same sessionId")
    return f"session {sid} forked as {forked}"


def _list(run: _Run) -> str:
    if not _session_marker(run, "list"):
        raise _Skip("agentCapabilities.sessionCapabilities.list is not advertised")
    agent, _ = run.main_session()
    answer = run.call(agent, "session/list", {})
    error = _error(answer)
    if error is not None:
        raise _Fail(f"session/list answered {_error_text(error)}")
    _well_formed(answer, "ListSessionsResponse", "session/list")
    result = answer.obj.get("result")
    sessions = result.get("sessions") if isinstance(result, dict) else None
    return f"{len(sessions) if isinstance(sessions, list) else 0} sessions listed"


def _close(run: _Run) -> str:
    if not _session_marker(run, "close"):
        raise _Skip("agentCapabilities.sessionCapabilities.close is not advertised")
    agent, session = _scratch(run)
    sid = session["sessionId"]
    answer = run.call(agent, "session/close", {"sessionId": sid})
    error = _error(answer)
    if error is not None:
        raise _Fail(f"session/close of session {sid} answered {_error_text(error)}")
    run.scratch = None
    return f"session {sid} closed"


def _bad_input(run: _Run, check: str) -> str:
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
        error, msg_id = _error(incoming), incoming.obj.get("id")
        if error is None or error.get("code") != -32700 or msg_id is not None:
            raise _Fail(
                "a line that is not JSON was answered "
                f"{_short(incoming.raw)}: expected error -32700 (Parse error) with id null"
            )
        sent = "a line that is not JSON"
    elif check == "unknown-method":
        incoming = run.call(agent, "acpwire_check/no_such_method", {}, deliberate=True)
        error = _error(incoming)
        if error is None or error.get("code") != -32601:
            raise _Fail(
                f"a request for an unknown method was answered {_short(incoming.raw)}: "
                "expected error -32601 (Method not found)"
            )
        sent = "an unknown method"
    else:
        incoming = run.call(agent, "session/new", {"cwd": 42, "mcpServers": []}, deliberate=True)
        error = _error(incoming)
        if error is None or error.get("code") != -32602:
            raise _Fail(
                f'session/new with "cwd": 42 was answered {_short(incoming.raw)}: expected '
                "error -32602 (Invalid params)"
            )
        sent = "invalid params"
    alive = run.still_serving(agent, sent)
    return f"{sent} answered {_error_text(error)}; {alive}"


def _end_of_input(run: _Run) -> str:
    agent = run.connect()
    agent.close_input()
    started = time.monotonic()
    _settle(agent, lambda _: None, ending=True)
    code = agent.wait_exit(max(0.0, run.options.exit_timeout - (time.monotonic() - started)))
    seconds = time.monotonic() - started
    if code is None:
        raise _Fail(
            f"stdin closed, and the agent was still running {run.options.exit_timeout:g} s "
            "later (--exit-timeout)"
        )
    run.main = None
    agent.stop(grace=0.5)
    return f"exited with code {code} {seconds:.1f} s after its stdin closed"


_BODIES: Final[dict[str, Callable[[_Run], str]]] = {
    "initialize": _initialize,
    "protocol-version-newer": lambda run: _version(run, NEWER_VERSION),
    "protocol-version-older": lambda run: _version(run, OLDER_VERSION),
    "session-new": _session_new,
    "session-set-mode": _set_mode,
    "session-set-config-option": _set_config,
    "prompt": _prompt,
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
assert list(_BODIES) == [check.name for check in CHECKS]


@contextlib.contextmanager
def _model(options: RunOptions) -> Iterator[tuple[ScriptedModel | None, str | None]]:
    if not options.wants_model:
        yield None, None
        return
    from acpwire.devtools.fake_llm import FakeLLM

    scripted = ScriptedModel(write_tool=options.write_tool, shell_tool=options.shell_tool)
    with FakeLLM(model=options.model_name, responder=scripted, context_length=131072) as llm:
        yield scripted, llm.base_url


def run_checks(options: RunOptions) -> RunReport:
    """Run the checks ``options`` select against the agent; AgentStartError when its
    command cannot be started. Every process the run started is ended before it returns."""
    unknown = sorted((set(options.only or ()) | options.skip) - set(BY_NAME))
    if unknown:
        raise ValueError(f"unknown checks: {', '.join(unknown)}")
    if not options.command:
        raise ValueError("no agent command")
    started = time.monotonic()
    with _model(options) as (scripted, base_url):
        run = _Run(options, scripted, base_url)
        try:
            for check in CHECKS:
                if check.name != "initialize" and not run.initialized:
                    if options.selected(check.name):  # nothing else can run
                        run.results[check.name] = CheckResult(
                            check.name, "SKIP", "initialize failed", check.spec
                        )
                    continue
                run.run(check.name, functools.partial(_BODIES[check.name], run))
        finally:
            if run.main is not None:
                run.main.stop(grace=1.0)
            run.close()
    return RunReport(
        agent=run.agent,
        checks=[run.results[c.name] for c in CHECKS if c.name in run.results],
        seconds=time.monotonic() - started,
        model=base_url,
    )
