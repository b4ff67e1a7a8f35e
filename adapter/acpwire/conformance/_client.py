"""The scripted client of a conformance run: the agent's processes, what the client
answers to the agent's requests (permissions, fs, terminals), a prompt turn, and running
one check to its :class:`~._checklist.CheckResult`."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from ._checklist import (
    ALWAYS,
    BY_NAME,
    REFUSAL,
    STOP_REASONS,
    AgentStartError,
    CheckResult,
    RunOptions,
    Status,
)
from ._model import ScriptedModel, marker
from ._wire import AgentExited, AgentProcess, Incoming, NoAnswer
from .checker import Direction, Finding

__all__ = ["Fail", "Run", "Skip", "Turn", "error_of", "error_text", "short"]


class Fail(Exception):
    def __init__(self, evidence: str, spec: str | None = None) -> None:
        super().__init__(evidence)
        self.evidence = evidence
        self.spec = spec


class Skip(Exception):
    pass


@dataclass(slots=True)
class Turn:
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


def short(value: object, limit: int = 140) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def error_of(answer: Incoming) -> Mapping[str, Any] | None:
    error = answer.obj.get("error")
    return error if isinstance(error, dict) else None


def error_text(error: Mapping[str, Any]) -> str:
    return f"{error.get('code')} {short(error.get('message', ''), 80)}"


class Run:
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
        self._turn: Turn | None = None

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
            raise Fail(
                f"the agent had exited (code {code}) after the previous check"
                + (f"; its last stderr line: {tail}" if tail else "")
            )
        self.main = self.spawn("main")
        answer = self.call(self.main, "initialize", self.initialize_params(1))
        if error_of(answer) is not None:
            raise Fail(
                f"initialize (restarting the agent) answered {error_text(error_of(answer) or {})}"
            )
        self.session, self.scratch = None, None  # the old process's sessions are gone
        self.turns = 0
        return self.main

    def main_session(self) -> tuple[AgentProcess, str]:
        if self.session_new_error is not None:
            raise Skip(f"no session: {self.session_new_error}")
        agent = self.connect()
        if self.session is None:
            answer = self.new_session(agent)
            session = answer.obj.get("result", {})
            sid = session.get("sessionId") if isinstance(session, dict) else None
            if not isinstance(sid, str):
                raise Fail(f"session/new (restarting the agent) answered {short(answer.raw)}")
            self.session = sid
        return agent, self.session

    def still_serving(self, agent: AgentProcess, after: str) -> str:
        """The agent answers a request after ``after``: session/new when it could create
        sessions, else an extension request (any answer will do)."""
        if self.can_create:
            answer = self.call(agent, "session/new", {"cwd": str(self.project), "mcpServers": []})
            if error_of(answer) is not None:
                raise Fail(
                    f"after {after}, session/new answered {error_text(error_of(answer) or {})}: "
                    "the agent no longer serves"
                )
            return "session/new still answered"
        self.call(agent, "_acpwire_check/ping", {})
        return "still answering"

    # Running a check.

    def run(self, check: str, body: Callable[[], str]) -> None:
        selected = self.options.selected(check)
        if not selected and check not in ALWAYS:
            return
        spec = BY_NAME[check].spec
        if BY_NAME[check].needs_model and self.model is None:
            if selected:
                self.record(
                    CheckResult(
                        check,
                        "SKIP",
                        "needs the agent to act: no model endpoint given (--model-endpoint, "
                        "--agent-env with {base_url}, or --hermes-home)",
                        spec,
                    )
                )
            return
        found: list[tuple[Direction, str, Finding]] = []
        self._current, self._check = found, check
        started = time.monotonic()
        status: Status = "PASS"
        try:
            evidence = body()
        except Fail as failed:
            status, evidence, spec = "FAIL", failed.evidence, failed.spec or spec
        except Skip as skipped:
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
            evidence = f"[{finding.rule}] {finding.message}{more}; {direction}: {short(raw, 160)}"
        if selected:
            line = " ".join(evidence.split())  # one line, whatever the agent's text held
            self.record(CheckResult(check, status, line, spec, time.monotonic() - started))

    def record(self, result: CheckResult) -> None:
        self.results[result.name] = result
        if self.options.progress is not None:
            self.options.progress(result)

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
        link: Path | None = None,
    ) -> Turn:
        agent, sid = self.main_session()
        turn = self._turn = Turn(None)
        words = f"{marker(action, check, str(path) if path else None)} {text}"
        blocks: list[dict[str, object]] = [{"type": "text", "text": words}]
        if link is not None:
            blocks.append({"type": "resource_link", "name": link.name, "uri": link.as_uri()})
        msg_id = agent.request("session/prompt", {"sessionId": sid, "prompt": blocks})
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
        error = error_of(turn.answer)
        if error is not None:
            raise Fail(
                f"session/prompt answered an error: {error_text(error)}{self._model_said(check)}"
            )
        reason = turn.stop_reason
        if reason not in STOP_REASONS:
            raise Fail(
                f"session/prompt answered stopReason {short(reason)}, not one of "
                f"{', '.join(sorted(STOP_REASONS))}: {short(turn.answer.raw)}",
                "ACP v1 schema § StopReason; prompt-turn § Stop Reasons",
            )
        return turn

    def _until_running(
        self,
        agent: AgentProcess,
        check: str,
        msg_id: int,
        turn: Turn,
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
