"""The ``initialize`` answer before the event loop starts: the stdio backend's first step.

An editor starts the backend, sends ``initialize`` at once and waits for the answer.
What the answer needs (the connection models, the probe, the configuration) is all
synchronous; the event loop, with anyio and asyncio, is about a sixth of start-up and
the answer needs none of it. So the stdio backend claims stdin and stdout
(:func:`acpwire.rpc.stdio.claim_stdio`), reads the first line itself and, when it is an
``initialize`` request that validates, answers it here as the connection would: the
same envelope model and decoding rules as :class:`acpwire.link.endpoint.AcpEndpoint`, the
same answer (:func:`~acpwire.server.methods.advertised.greet`), the same encoder. The
event loop then starts on the claim: what was read and not used is received first, and
the connection adopts the probe and loads the backend as after any ``initialize``.

Anything else first (another method, a notification, a line that is not JSON, too long
or nested too deeply, params that do not validate, a null id, end of input) is not
answered here: it goes to the connection untouched, which answers it as it answers every
message (a notification, however malformed, not at all). Only what can be answered in
full is answered early.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from pydantic import ValidationError

from acp_v1 import dispatch, models as m
from acpwire.link.decoding import holds_non_finite
from acpwire.probe import ConnectionProbe
from acpwire.rpc.messages import RequestId, encode_result
from acpwire.rpc.stdio import ClaimedStdio, claim_stdio
from acpwire.server.methods.advertised import DEFAULT_MCP_TRANSPORTS, greet

if TYPE_CHECKING:
    from acpwire.agent.factory import AgentFactory

__all__ = ["EARLY_LINE_LIMIT", "EarlyStart", "answer_first"]

logger = logging.getLogger(__name__)

EARLY_LINE_LIMIT: Final = 1024 * 1024
"""A first line longer than this is left to the connection (an ``initialize`` is ~1 KB)."""
_READ_CHUNK: Final = 64 * 1024
_BLANK: Final = b" \t\r"


@dataclass(slots=True)
class EarlyStart:
    """What the event loop starts from: the claimed stdio and, when ``initialize`` was
    answered, the probe of the client (the factory's look-up has then begun)."""

    stdio: ClaimedStdio
    probe: ConnectionProbe | None = None


def answer_first(factory: AgentFactory, *, unstable: bool) -> EarlyStart | None:
    """Claim stdio and answer the first message when it is a valid ``initialize``.

    Returns None when the process should end instead: interrupted (``KeyboardInterrupt``)
    before the answer was written.
    """
    try:
        return _answer(claim_stdio(), factory, unstable=unstable)
    except KeyboardInterrupt:
        logger.info("interrupted before the event loop started; shutting down")
        return None


def _answer(stdio: ClaimedStdio, factory: AgentFactory, *, unstable: bool) -> EarlyStart:
    start = EarlyStart(stdio)
    first = _first_line(stdio)
    request = None if first is None else _initialize_request(first[0])
    if first is None or request is None:
        return start
    msg_id, params = request
    try:
        probe, response = greet(
            params,
            factory,
            provider=factory.provider_hint(),
            unstable=unstable,
            mcp_http=DEFAULT_MCP_TRANSPORTS["http"],
            mcp_sse=DEFAULT_MCP_TRANSPORTS["sse"],
        )
    except Exception:  # e.g. a user's factory failing: the connection answers -32603
        logger.debug("the early initialize answer failed; the connection answers", exc_info=True)
        return start
    start.probe = probe
    stdio.unread = stdio.unread[first[1] :]
    try:
        stdio.write_all(encode_result(msg_id, response))
    except OSError as exc:  # the client is gone; the connection sees the end of input
        logger.warning("writing the initialize answer failed: %s", exc)
    # What the factory asks the network (models, local discovery) runs in its own
    # thread while the event loop and the backend load.
    factory.start_lookup()
    return start


def _first_line(stdio: ClaimedStdio) -> tuple[bytes, int] | None:
    """Read until the first line that is not blank is complete: that line and where the
    bytes after it start; None when input ended, grew past :data:`EARLY_LINE_LIMIT` or
    could not be read."""
    scanned = start = 0
    while True:
        buffered = stdio.unread
        newline = buffered.find(b"\n", scanned)
        if newline < 0:
            if len(buffered) - start > EARLY_LINE_LIMIT or stdio.at_eof:
                return None
            scanned = len(buffered)
            try:
                stdio.read_some(_READ_CHUNK)
            except OSError as exc:  # the connection's reader meets it again and says so
                logger.debug("reading the first line failed: %s", exc)
                return None
            continue
        line = buffered[start:newline].rstrip(b"\r")
        if line.strip(_BLANK):
            return line, newline + 1
        scanned = start = newline + 1


def _initialize_request(line: bytes) -> tuple[RequestId, m.InitializeRequest] | None:
    """The id and params of ``line`` when it is a valid ``initialize`` request with an
    integer or string id, decoded as the connection's endpoint decodes it; else None."""
    if holds_non_finite(line):  # the endpoint's own refusal (its general path answers)
        return None
    envelope = dispatch.AGENT_ENVELOPES["initialize"]
    try:
        message = envelope.model_validate_json(line)
    except ValidationError:
        return None
    msg_id = getattr(message, "id", None)
    params = getattr(message, "params", None)
    if msg_id.__class__ not in (int, str) or not isinstance(params, m.InitializeRequest):
        return None
    return msg_id, params
