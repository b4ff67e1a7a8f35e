"""``protocolVersion`` negotiation, on the raw value from the wire.

The rule (``docs/protocol/v1/initialization.mdx``): the client sends the latest version it
supports; the agent answers the same version if it supports it, otherwise the latest one
it supports, and a client that cannot speak the answer closes the connection. So the
agent never refuses ``initialize`` over the version: whatever arrives, the answer is a
version the agent speaks, and the client decides.

This runs on the raw value because the typed ``InitializeRequest`` rejects what real
clients send: MCP-style clients send a date string such as ``"2025-11-25"``
(client-quirks.md §4.10), others omit the field. Answering ``1`` lets a v1 client carry
on and tells any other client plainly what it is talking to.
"""

from __future__ import annotations

import logging
from collections.abc import Collection

logger = logging.getLogger(__name__)


def negotiate(requested: object, supported: Collection[int] = (1,)) -> int:
    """The ``protocolVersion`` to answer for the raw ``requested`` value.

    A supported integer comes back unchanged; anything else (a newer or older integer, a
    date string, null, a float, a missing field passed as None) gets the latest supported.
    """
    if not supported:
        raise ValueError("negotiate() needs at least one supported protocol version")
    latest = max(supported)
    # bool is an int in Python, but `true` is not a version on the wire.
    if isinstance(requested, int) and not isinstance(requested, bool):
        if requested in supported:
            return requested
        logger.debug("client asked for protocolVersion %d; answering %d", requested, latest)
        return latest
    logger.info("client sent a non-integer protocolVersion %r; answering %d", requested, latest)
    return latest
