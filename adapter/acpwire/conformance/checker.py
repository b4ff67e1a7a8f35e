"""The protocol checker: every message of one ACP connection, in the order either side
sent it, checked against JSON-RPC 2.0, the method table, the generated models and the
rules of the protocol a schema cannot say (:mod:`.rules`).

Feed it each parsed message with its direction, :meth:`ProtocolChecker.check`; it
returns what it found (never raises, never writes anything) and keeps only what later
messages need: the requests waiting for an answer, the capabilities each side
advertised, the sessions the client was given, their tool calls and whether their turn
is over. :meth:`ProtocolChecker.finish` reports the requests never answered.

Params and results are validated as acpwire's own decoder reads them
(``validate_python(..., context=acp_v1.DECODE)``): unknown open-enum values are kept and
the fields the schema marks lenient (``x-deserialize-*``) fall back to their default
rather than fail, so what is reported is what a receiver built on these bindings refuses.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from pydantic import TypeAdapter, ValidationError

from acp_v1 import DECODE, methods
from acp_v1.methods import MethodSpec
from acpwire.probe.requirements import Unadvertised, to_agent, to_client
from acpwire.probe.signals import ClientSignals

from .rules import RULES, Level

__all__ = [
    "AGENT_TO_CLIENT",
    "CLIENT_TO_AGENT",
    "Direction",
    "Finding",
    "ProtocolChecker",
]

Direction = Literal["client->agent", "agent->client"]
CLIENT_TO_AGENT: Final[Direction] = "client->agent"
AGENT_TO_CLIENT: Final[Direction] = "agent->client"

_INT64: Final = 1 << 63
_ANSWERED_KEPT: Final = 1 << 16
"""How many answered ids per direction are remembered, to tell a second answer from one
to an id never seen (the oldest are forgotten first)."""

TURN_OUTPUT: Final = frozenset(
    {
        "user_message_chunk",
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
        "plan",
        "plan_update",
        "plan_removed",
    }
)
"""Updates that belong to a prompt turn (and that ``session/load`` replays). The others (commands, mode, config options,
session info, usage...) describe the session's state and may come at any time."""

_SESSION_GIVEN_BY_REQUEST: Final = frozenset(
    {methods.SESSION_LOAD, methods.SESSION_RESUME, methods.SESSION_FORK}
)
_SESSION_GIVEN_BY_RESULT: Final = frozenset({methods.SESSION_NEW, methods.SESSION_FORK})


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing the checker found about one message (or, from :meth:`finish`, the run)."""

    rule: str
    message: str
    spec: str
    level: Level = "violation"

    def to_json(self) -> dict[str, str]:
        """The trace's form: ``{"rule", "message", "spec"}``."""
        return {"rule": self.rule, "message": self.message, "spec": self.spec}


def _by_method() -> dict[str, tuple[MethodSpec, ...]]:
    table: dict[str, list[MethodSpec]] = {}
    for spec in methods.METHODS:
        table.setdefault(spec.method, []).append(spec)
    return {method: tuple(specs) for method, specs in table.items()}


_SPECS: Final = _by_method()


@functools.cache
def _adapter(type_name: str) -> TypeAdapter[Any]:
    from acp_v1 import models

    return TypeAdapter(getattr(models, type_name))


def _validate(type_name: str, value: object, where: str) -> str | None:
    """None when ``value`` validates as ``type_name``; else its first error, compactly:
    ``where.loc: msg`` (and how many more there are)."""
    try:
        _adapter(type_name).validate_python(value, context=DECODE)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_context=False, include_input=False)
        if not errors:
            return str(exc)
        first = errors[0]
        loc = ".".join([where, *(str(p) for p in first["loc"] if not _validator_step(str(p)))])
        text = f"{loc}: {first['msg']}"
        return text + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")
    return None


def _validator_step(part: str) -> bool:
    """A location part naming a validator, not a field (``tagged-union[...]``,
    ``function-wrap[...]``): left out of the path a reader looks for."""
    return "[" in part or part.startswith("function-")


def _key(msg_id: object) -> str:
    return json.dumps(msg_id)  # 1 and "1" are different ids


def _other(direction: Direction) -> Direction:
    return AGENT_TO_CLIENT if direction == CLIENT_TO_AGENT else CLIENT_TO_AGENT


def _sender(direction: Direction) -> str:
    return "client" if direction == CLIENT_TO_AGENT else "agent"


def _show(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def _jsonrpc_id(value: object) -> bool:
    """A request id ACP's peers accept: a string, or an integer in int64's range."""
    if isinstance(value, str):
        return True
    return isinstance(value, int) and not isinstance(value, bool) and -_INT64 <= value < _INT64


@dataclass(slots=True)
class _Pending:
    method: str
    spec: MethodSpec | None
    """The method's row when its params were checked; None when the result is not."""
    params: Mapping[str, object]


@dataclass(slots=True)
class _Session:
    tool_calls: set[str] = field(default_factory=set)
    prompts: int = 0
    """session/prompt requests not answered yet (a client may queue one behind another)."""
    turn_over: bool = False
    """A session/prompt was answered and none is open now."""
    loading: int = 0
    """session/load requests not answered yet (their replay is turn output)."""


@dataclass(slots=True)
class _Message:
    kind: Literal["request", "notification", "response"]
    method: str | None
    id: object


class ProtocolChecker:
    """Checks one connection's messages, in order; one checker per connection."""

    def __init__(self) -> None:
        self._pending: dict[Direction, dict[str, _Pending]] = {
            CLIENT_TO_AGENT: {},
            AGENT_TO_CLIENT: {},
        }
        self._answered: dict[Direction, dict[str, None]] = {
            CLIENT_TO_AGENT: {},
            AGENT_TO_CLIENT: {},
        }
        self._client_caps: object = None
        self._client_signals = ClientSignals()
        self._agent_caps: object = None
        self._sessions: dict[str, _Session] = {}
        self.counts: Counter[str] = Counter()
        """Findings so far, by rule (violations and information alike)."""

    # The public surface.

    def check(self, direction: Direction, message: object) -> list[Finding]:
        """What is wrong with (or worth saying about) ``message``, a parsed JSON value
        ``direction``'s sender wrote; updates the connection's state."""
        found: list[Finding] = []
        shape = self._envelope(message, found)
        if shape is not None and isinstance(message, dict):
            if shape.kind == "response":
                self._response(direction, shape.id, message, found)
            else:
                assert shape.method is not None
                self._call(direction, shape, message.get("params"), found)
        return self._counted(found)

    def unparsable(self, direction: Direction) -> list[Finding]:
        """A line ``direction``'s sender wrote that is not JSON at all."""
        return self._counted(
            [self._finding("not-json", f"the {_sender(direction)} wrote a line that is not JSON")]
        )

    def finish(self) -> list[Finding]:
        """The end of the connection: every request still waiting for its answer."""
        found = [
            self._finding(
                "unanswered",
                f"{pending.method} request {_show(json.loads(key))} sent by the "
                f"{_sender(direction)} was never answered",
            )
            for direction, waiting in self._pending.items()
            for key, pending in waiting.items()
        ]
        for waiting in self._pending.values():
            waiting.clear()
        return self._counted(found)

    @property
    def violations(self) -> int:
        """How many violations were found so far."""
        return sum(n for rule, n in self.counts.items() if RULES[rule].level == "violation")

    # Findings.

    @staticmethod
    def _finding(rule: str, message: str, spec: str | None = None) -> Finding:
        known = RULES[rule]
        return Finding(rule, message, spec or known.spec, known.level)

    def _counted(self, found: list[Finding]) -> list[Finding]:
        self.counts.update(f.rule for f in found)
        return found

    # JSON-RPC 2.0.

    def _envelope(self, message: object, found: list[Finding]) -> _Message | None:
        def bad(text: str, spec: str) -> None:
            found.append(self._finding("envelope", text, spec))

        if isinstance(message, list):
            bad(
                "a batch (a JSON array): ACP peers send one message a line",
                "JSON-RPC 2.0 § 6 Batch",
            )
            return None
        if not isinstance(message, dict):
            bad(f"{_show(message)} is not a JSON-RPC message (an object)", "JSON-RPC 2.0 § 4")
            return None
        if message.get("jsonrpc") != "2.0":
            got = _show(message["jsonrpc"]) if "jsonrpc" in message else "missing"
            bad(f'jsonrpc must be "2.0" (got {got})', "JSON-RPC 2.0 § 4 Request object")
        if "method" in message:
            method = message["method"]
            if not isinstance(method, str):
                bad(f"method must be a string (got {_show(method)})", "JSON-RPC 2.0 § 4")
                return None
            if "result" in message or "error" in message:
                bad(f"{method}: a request carries no result or error", "JSON-RPC 2.0 § 4")
            params = message.get("params")
            if "params" in message and not isinstance(params, dict | list):
                bad(
                    f"{method}: params must be an object or an array (got {_show(params)})",
                    "JSON-RPC 2.0 § 4.2 Parameter Structures",
                )
            if "id" not in message:
                return _Message("notification", method, None)
            if not _jsonrpc_id(message["id"]):
                bad(
                    f"{method}: a request id must be a string or an integer "
                    f"(got {_show(message['id'])})",
                    "JSON-RPC 2.0 § 4 Request object",
                )
            return _Message("request", method, message["id"])
        if "result" in message or "error" in message:
            if "id" not in message:
                bad("a response without an id", "JSON-RPC 2.0 § 5 Response object")
                return None
            msg_id = message["id"]
            if "result" in message and "error" in message:
                bad(
                    "a response carries both result and error (exactly one)",
                    "JSON-RPC 2.0 § 5 Response object",
                )
            elif "error" in message:
                self._error_object(message["error"], bad)
            if not _jsonrpc_id(msg_id) and not (msg_id is None and "result" not in message):
                bad(
                    f"a response id must be the request's: a string or an integer "
                    f"(got {_show(msg_id)})",
                    "JSON-RPC 2.0 § 5 Response object",
                )
            return _Message("response", None, msg_id)
        bad(
            "neither a request or notification (method) nor a response (result or error)",
            "JSON-RPC 2.0 § 4 Request object",
        )
        return None

    @staticmethod
    def _error_object(error: object, bad: Callable[[str, str], None]) -> None:
        spec = "JSON-RPC 2.0 § 5.1 Error object"
        if not isinstance(error, dict):
            bad(f"error must be an object (got {_show(error)})", spec)
            return
        code = error.get("code")
        if not isinstance(code, int) or isinstance(code, bool):
            bad(f"error.code must be an integer (got {_show(code)})", spec)
        if not isinstance(error.get("message"), str):
            bad(f"error.message must be a string (got {_show(error.get('message'))})", spec)

    # Requests and notifications.

    def _lookup(
        self, direction: Direction, kind: str, method: str
    ) -> tuple[MethodSpec | None, Finding | None]:
        """The method's row for this direction and kind, or what is wrong instead."""
        specs = _SPECS.get(method, ())
        receiver = "agent" if direction == CLIENT_TO_AGENT else "client"
        sides = (receiver, "protocol", "proxy", "both")
        for spec in specs:
            if spec.side in sides and spec.kind == kind:
                return spec, None
        if method.startswith("_"):
            return None, self._finding(
                "extension-method", f"{method}: an extension {kind}, not checked"
            )
        if not specs:
            return None, self._finding(
                "unknown-method", f"{method}: a method these bindings do not know ({kind})"
            )
        if any(spec.kind == kind for spec in specs):
            sender = _sender(direction)
            return None, self._finding(
                "direction", f"{method} is a method the {sender} handles, sent by the {sender}"
            )
        other = "notification" if kind == "request" else "request"
        return None, self._finding(
            "method-kind",
            f"{method} is a {other}, sent as a {kind}"
            + (" (with an id)" if kind == "request" else " (without an id)"),
        )

    def _call(
        self, direction: Direction, shape: _Message, params: object, found: list[Finding]
    ) -> None:
        method = shape.method
        assert method is not None
        spec, problem = self._lookup(direction, shape.kind, method)
        if problem is not None:
            found.append(problem)
        raw: Mapping[str, object] = params if isinstance(params, dict) else {}
        if spec is not None:
            error = _validate(spec.params_name, {} if params is None else params, "params")
            if error is not None:
                found.append(
                    self._finding(
                        "params", f"{method} {error}", f"ACP v1 schema § {spec.params_name}"
                    )
                )
        if shape.kind == "request":
            key = _key(shape.id)
            if key in self._pending[direction]:
                found.append(
                    self._finding(
                        "envelope",
                        f"{method}: id {_show(shape.id)} is already used by a request "
                        f"({self._pending[direction][key].method}) not answered yet",
                        "JSON-RPC 2.0 § 4 Request object",
                    )
                )
            self._pending[direction][key] = _Pending(method, spec, raw)
        if spec is None:
            return
        if direction == CLIENT_TO_AGENT:
            self._from_client(method, raw, found)
        else:
            self._from_agent(method, raw, found)

    def _from_client(self, method: str, params: Mapping[str, object], found: list[Finding]) -> None:
        if method == methods.INITIALIZE:
            self._client_caps = params.get("clientCapabilities")
            self._client_signals = ClientSignals.from_wire(self._client_caps)
            return
        found.extend(
            self._not_advertised(gap) for gap in to_agent(method, params, self._agent_caps)
        )
        session_id = params.get("sessionId")
        if method in _SESSION_GIVEN_BY_REQUEST and isinstance(session_id, str):
            session = self._sessions.setdefault(session_id, _Session())
            if method == methods.SESSION_LOAD:
                session.loading += 1
        if (
            method == methods.SESSION_PROMPT
            and isinstance(session_id, str)
            and session_id in self._sessions
        ):
            session = self._sessions[session_id]
            session.prompts += 1
            session.turn_over = False

    def _not_advertised(self, gap: Unadvertised) -> Finding:
        return self._finding("capability", gap.describe(), gap.spec)

    def _from_agent(self, method: str, params: Mapping[str, object], found: list[Finding]) -> None:
        client = self._client_signals
        found.extend(self._not_advertised(gap) for gap in to_client(method, params, client))
        session_id = params.get("sessionId")
        if not isinstance(session_id, str):
            return
        session = self._sessions.get(session_id)
        if session is None:
            found.append(
                self._finding(
                    "unknown-session",
                    f"{method} for session {_show(session_id)}, which the client was never given",
                )
            )
            return
        if method != methods.SESSION_UPDATE:
            return
        update = params.get("update")
        if not isinstance(update, dict):
            return
        tag = update.get("sessionUpdate")
        if tag in TURN_OUTPUT and session.turn_over and not session.loading:
            found.append(
                self._finding(
                    "update-after-turn",
                    f"{tag} for session {_show(session_id)} after its session/prompt was "
                    "answered (and before the next prompt)",
                )
            )
        tool_call_id = update.get("toolCallId")
        if not isinstance(tool_call_id, str):
            return
        if tag == "tool_call":
            session.tool_calls.add(tool_call_id)
        elif tag == "tool_call_update" and tool_call_id not in session.tool_calls:
            found.append(
                self._finding(
                    "unknown-tool-call",
                    f"tool_call_update for toolCallId {_show(tool_call_id)}, which no "
                    f"tool_call of session {_show(session_id)} announced",
                )
            )

    # Responses.

    def _response(
        self,
        direction: Direction,
        msg_id: object,
        message: Mapping[str, object],
        found: list[Finding],
    ) -> None:
        asker = _other(direction)
        key = _key(msg_id)
        pending = self._pending[asker].pop(key, None)
        if pending is None:
            if key in self._answered[asker]:
                found.append(
                    self._finding(
                        "duplicate-answer",
                        f"a second answer to request {_show(msg_id)} of the {_sender(asker)}",
                    )
                )
            elif msg_id is not None:  # null answers a request whose id could not be read
                found.append(
                    self._finding(
                        "unknown-id",
                        f"an answer to request {_show(msg_id)}, which the {_sender(asker)} "
                        "never sent",
                    )
                )
            return
        answered = self._answered[asker]
        answered[key] = None
        if len(answered) > _ANSWERED_KEPT:
            del answered[next(iter(answered))]
        method, spec = pending.method, pending.spec
        session_id = pending.params.get("sessionId")
        if method == methods.SESSION_PROMPT and isinstance(session_id, str):
            session = self._sessions.get(session_id)
            if session is not None:
                session.prompts = max(0, session.prompts - 1)
                session.turn_over = session.prompts == 0
        if method == methods.SESSION_LOAD and isinstance(session_id, str):
            session = self._sessions.get(session_id)
            if session is not None and session.loading:
                session.loading -= 1
        if "result" not in message or "error" in message or spec is None:
            return
        result = message["result"]
        if spec.result_name is not None:
            error = _validate(spec.result_name, result, "result")
            if error is not None:
                found.append(
                    self._finding(
                        "result", f"{method} {error}", f"ACP v1 schema § {spec.result_name}"
                    )
                )
        if not isinstance(result, dict):
            return
        if method == methods.INITIALIZE:
            self._agent_caps = result.get("agentCapabilities")
        elif method in _SESSION_GIVEN_BY_RESULT and isinstance(result.get("sessionId"), str):
            self._sessions.setdefault(str(result["sessionId"]), _Session())
        elif method == methods.SESSION_REQUEST_PERMISSION:
            self._permission_answer(pending.params, result, found)

    def _permission_answer(
        self, params: Mapping[str, object], result: Mapping[str, object], found: list[Finding]
    ) -> None:
        outcome = result.get("outcome")
        if not isinstance(outcome, dict) or outcome.get("outcome") != "selected":
            return
        chosen = outcome.get("optionId")
        options = params.get("options")
        offered = [
            option.get("optionId")
            for option in (options if isinstance(options, list) else ())
            if isinstance(option, dict)
        ]
        if chosen not in offered:
            found.append(
                self._finding(
                    "unoffered-option",
                    f"session/request_permission answered with optionId {_show(chosen)}, "
                    f"not among the options offered ({', '.join(_show(o) for o in offered)})",
                )
            )
