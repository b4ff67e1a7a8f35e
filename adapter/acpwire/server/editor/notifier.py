"""Sending ``session/update`` notifications, only those the client can understand.

Every update goes through the connection's capability probe: a variant the client
cannot know (newer than its protocol knowledge, unstable, absent from the bindings) is
not sent, because SDK-based clients drop the whole notification or fail on it. A client
that shows no ``content`` items of tool calls (Obsidian) also gets a finished call's text
output as a message, where it is shown.
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Any

from acp_v1 import models as m
from acp_v1.peers import ClientPeer
from acpwire.link.builders import text_chunk
from acpwire.link.fastpath import ChunkKind, text_chunk_params
from acpwire.probe import ConnectionProbe
from acpwire.rpc import Connection
from acpwire.server.editor.null_diffs import send_update

logger = logging.getLogger(__name__)


class Notifier:
    """Sends typed session updates to one client."""

    def __init__(self, client: ClientPeer, probe: ConnectionProbe | None = None) -> None:
        self.client = client
        self.probe = probe

    def allows(self, tag: str) -> bool:
        return self.probe is None or self.probe.can_send_update(tag)

    async def update(self, session_id: str, update: Any) -> bool:
        """Send one update; False when the client cannot understand its variant."""
        tag = update.session_update
        if not self.allows(tag):
            logger.debug(
                "not sending %s to %s: the client does not know it",
                tag,
                self.probe and self.probe.client_name,
            )
            return False
        text = _plain_text(update)
        if text is None or not await self._encoded_text(session_id, text, tag):
            await send_update(
                self.client, m.SessionNotification(session_id=session_id, update=update)
            )
        if tag == "tool_call_update" and self.probe and not self.probe.renders_tool_content:
            shown = _output_as_message(update)
            if shown is not None:
                await self.message(session_id, shown)
        return True

    async def text(self, session_id: str, text: str, kind: ChunkKind) -> bool:
        """A streamed text or thought chunk, on the pre-encoded fast path when possible."""
        if not self.allows(kind):
            return False
        if not await self._encoded_text(session_id, text, kind):
            await self.client.session_update(text_chunk(session_id, text, kind))
        return True

    async def _encoded_text(self, session_id: str, text: str, kind: ChunkKind) -> bool:
        """Send a text chunk as pre-encoded bytes; False when that path is not available."""
        out = self.client.outbound
        if isinstance(out, Connection):
            params = text_chunk_params(session_id, text, kind)
            if params is not None:
                await out.notify_encoded("session/update", params)
                return True
        return False

    async def message(self, session_id: str, text: str) -> bool:
        """An agent message chunk (a whole short reply or a notice)."""
        return await self.text(session_id, text, "agent_message_chunk")


@functools.cache
def _text_chunks() -> frozenset[type]:
    """The text chunk update classes (looked up on first use: the models load lazily)."""
    return frozenset(
        (
            m.SessionUpdateAgentMessageChunk,
            m.SessionUpdateAgentThoughtChunk,
            m.SessionUpdateUserMessageChunk,
        )
    )


def _plain_text(update: Any) -> str | None:
    """The text of a chunk update that holds nothing but text (the fast path's shape:
    no ``_meta``, message id or annotations), else None."""
    if type(update) not in _text_chunks() or update.meta is not None:
        return None
    if update.message_id is not None:
        return None
    block = update.content
    if type(block) is not m.ContentBlockText or block.meta is not None:
        return None
    if block.annotations is not None:
        return None
    return block.text


MIRRORED_CHARS = 2000
"""How much of a tool's output is repeated as a message for clients that hide it."""


def _output_as_message(update: m.SessionUpdateToolCallUpdate) -> str | None:
    """A finished call's text output as a message, for a client that does not show
    ``content`` items; None when there is nothing such a client would miss."""
    if update.status not in ("completed", "failed"):
        return None
    texts = [
        item.content.text
        for item in update.content or []
        if isinstance(item, m.ToolCallContentContent)
        and isinstance(item.content, m.ContentBlockText)
        and item.content.text.strip()
    ]
    if not texts:
        return None
    text = "\n".join(texts)
    if len(text) > MIRRORED_CHARS:
        text = text[:MIRRORED_CHARS] + f"\n[... {len(text) - MIRRORED_CHARS} more characters]"
    label = "Tool call failed" if update.status == "failed" else "Tool output"
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)  # the output's own backticks cannot close it
    # Blank lines around it: such clients join message chunks, and the reply that follows
    # must not run into the closing fence.
    return f"\n\n{label}:\n{fence}\n{text}\n{fence}\n\n"
