"""What a tap trace says: its messages tied to sessions, the handshake, the latencies
and the violations, read from the JSONL file ``acpwire tap`` writes (docs/TAP.md).

Stdlib only, and tolerant: a line that is not a JSON object, a record of a kind it does
not know or a message whose ``raw`` is not JSON is kept and counted, never fatal, since
a trace is most useful when something went wrong.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acpwire.cli.tap._trace import AGENT_TO_CLIENT, CLIENT_TO_AGENT

__all__ = ["Latency", "Message", "Summary", "read_trace", "summarize"]

CONNECTION = ""
"""The group of the messages that belong to no session (initialize, authenticate...)."""


@dataclass
class Message:
    """One recorded message: the trace's fields, the parsed body and its session."""

    index: int
    t: float
    direction: str
    kind: str
    method: str | None
    id: object
    raw: str
    body: object = None
    session: str = CONNECTION
    violations: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Latency:
    """A measured wait: what, in which session, seconds (None: never answered)."""

    name: str
    session: str
    seconds: float | None
    detail: str = ""


@dataclass
class Summary:
    source: str
    messages: list[Message] = field(default_factory=list)
    sessions: dict[str, list[Message]] = field(default_factory=dict)
    """Session id -> its messages in order (``CONNECTION`` first: the rest)."""
    client: dict[str, Any] = field(default_factory=dict)
    """What the client's ``initialize`` said: protocolVersion, clientInfo, clientCapabilities."""
    agent: dict[str, Any] = field(default_factory=dict)
    """What the agent's answer said: protocolVersion, agentInfo, agentCapabilities, authMethods."""
    latencies: list[Latency] = field(default_factory=list)
    unreadable: int = 0
    """Lines of the file that were no trace record."""
    extra_violations: list[dict[str, Any]] = field(default_factory=list)
    """Violations reported on records that are no message (the tap's end-of-run report)."""
    unanswered: list[Message] = field(default_factory=list)

    @property
    def violations(self) -> list[tuple[Message | None, dict[str, Any]]]:
        found: list[tuple[Message | None, dict[str, Any]]] = [
            (m, v) for m in self.messages for v in m.violations
        ]
        return found + [(None, v) for v in self.extra_violations]

    def violation_counts(self) -> Counter[str]:
        return Counter(str(v.get("rule") or "unnamed") for _, v in self.violations)

    def method_counts(self) -> Counter[str]:
        return Counter(f"{m.method or '(' + m.kind + ')'} {m.direction}" for m in self.messages)

    @property
    def duration(self) -> float:
        return max((m.t for m in self.messages), default=0.0)

    def as_json(self) -> dict[str, Any]:
        """The summary as plain data (``--format json``)."""
        return {
            "source": self.source,
            "messages": len(self.messages),
            "duration_s": round(self.duration, 6),
            "unreadable_lines": self.unreadable,
            "sessions": {
                sid or "(connection)": len(messages) for sid, messages in self.sessions.items()
            },
            "handshake": {"client": self.client, "agent": self.agent},
            "latencies": [
                {"name": x.name, "session": x.session, "seconds": x.seconds, "detail": x.detail}
                for x in self.latencies
            ],
            "violations": [
                {
                    **v,
                    "message_index": None if m is None else m.index,
                    "t": None if m is None else m.t,
                }
                for m, v in self.violations
            ],
            "violation_counts": dict(self.violation_counts()),
            "unanswered": [
                {"index": m.index, "method": m.method, "id": m.id, "direction": m.direction}
                for m in self.unanswered
            ],
            "methods": dict(self.method_counts()),
        }


class NotATapTrace(ValueError):
    """The file is a trace of ``acpwire check`` (its lines by check and agent process,
    several connections in one file), which a report of one connection cannot show."""


def read_trace(path: Path) -> Summary:
    """The summary of the trace at ``path`` (raises OSError when it cannot be read, and
    :class:`NotATapTrace` for a trace of ``acpwire check``)."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        return summarize(handle, source=str(path))


def summarize(lines: Iterable[str], *, source: str = "") -> Summary:
    summary = Summary(source)
    for line in lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            summary.unreadable += 1
            continue
        if not isinstance(record, dict):
            summary.unreadable += 1
            continue
        if "check" in record and "agent" in record and "kind" not in record:
            raise NotATapTrace(source)
        message = _message(record, len(summary.messages))
        if message is None:  # a record of another kind: keep what it reports
            found = record.get("violations")
            if isinstance(found, list):
                summary.extra_violations += [v for v in found if isinstance(v, dict)]
            else:
                summary.unreadable += 1
            continue
        summary.messages.append(message)
    _tie(summary)
    return summary


def _message(record: dict[str, Any], index: int) -> Message | None:
    direction, raw = record.get("dir"), record.get("raw")
    if direction not in (CLIENT_TO_AGENT, AGENT_TO_CLIENT) or not isinstance(raw, str):
        return None
    t = record.get("t")
    method = record.get("method")
    try:
        body: object = json.loads(raw)
    except ValueError:
        body = None
    found = record.get("violations")
    return Message(
        index=index,
        t=float(t) if isinstance(t, int | float) else 0.0,
        direction=str(direction),
        kind=str(record.get("kind") or "invalid"),
        method=method if isinstance(method, str) else None,
        id=record.get("id"),
        raw=raw,
        body=body,
        violations=[v for v in found if isinstance(v, dict)] if isinstance(found, list) else [],
    )


def _get(value: object, *keys: str) -> object:
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _key(message: Message) -> str:
    return json.dumps(message.id, sort_keys=True)


def _tie(summary: Summary) -> None:
    """Sessions, the handshake, latencies and unanswered requests, in one pass."""
    pending: dict[tuple[str, str], Message] = {}
    prompts: dict[str, Message] = {}  # session -> its running prompt request
    first_update: dict[str, float] = {}
    for message in summary.messages:
        body = message.body
        session = _get(body, "params", "sessionId")
        if message.kind == "request":
            pending[(message.direction, _key(message))] = message
            if message.method == "initialize" and message.direction == CLIENT_TO_AGENT:
                params = _get(body, "params")
                if isinstance(params, dict):
                    summary.client = {
                        k: params[k]
                        for k in ("protocolVersion", "clientInfo", "clientCapabilities")
                        if k in params
                    }
            if message.method == "session/prompt" and isinstance(session, str):
                prompts[session] = message
                first_update.pop(session, None)
        elif message.kind == "response":
            asked_in = CLIENT_TO_AGENT if message.direction == AGENT_TO_CLIENT else AGENT_TO_CLIENT
            request = pending.pop((asked_in, _key(message)), None)
            if request is not None:
                session = _get(request.body, "params", "sessionId")
                if not isinstance(session, str):
                    session = _get(body, "result", "sessionId")
                    if isinstance(session, str):  # session/new: the request joins its session
                        request.session = session
                _answered(summary, request, message, session, prompts, first_update)
        elif (
            message.kind == "notification"
            and message.method == "session/update"
            and isinstance(session, str)
            and session in prompts
            and session not in first_update
        ):
            first_update[session] = message.t
        message.session = session if isinstance(session, str) else CONNECTION
    for request in pending.values():
        summary.unanswered.append(request)
        summary.latencies.append(
            Latency(str(request.method), request.session, None, "never answered")
        )
    summary.sessions = {CONNECTION: []}  # the connection's group first
    for message in summary.messages:
        summary.sessions.setdefault(message.session, []).append(message)
    if not summary.sessions[CONNECTION]:
        del summary.sessions[CONNECTION]


def _answered(
    summary: Summary,
    request: Message,
    response: Message,
    session: object,
    prompts: dict[str, Message],
    first_update: dict[str, float],
) -> None:
    waited = round(response.t - request.t, 6)
    sid = session if isinstance(session, str) else CONNECTION
    method = request.method or "?"
    if method == "initialize":
        result = _get(response.body, "result")
        if isinstance(result, dict):
            summary.agent = {
                k: result[k]
                for k in ("protocolVersion", "agentInfo", "agentCapabilities", "authMethods")
                if k in result
            }
        summary.latencies.append(Latency("initialize", sid, waited))
    elif method in ("session/new", "session/load", "session/resume", "session/fork"):
        summary.latencies.append(Latency(method, sid, waited))
    elif method == "session/prompt":
        stop = _get(response.body, "result", "stopReason")
        first = first_update.get(sid)
        if first is not None:
            summary.latencies.append(
                Latency("time to first update", sid, round(first - request.t, 6))
            )
        detail = f"stopReason {stop}" if isinstance(stop, str) else "answered with an error"
        summary.latencies.append(Latency("prompt", sid, waited, detail))
        if prompts.get(sid) is request:
            del prompts[sid]
