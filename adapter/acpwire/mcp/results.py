"""Turning an MCP ``CallToolResult`` (or a server's failure) into the text the model sees.

Text content is kept as it is and joined with newlines; images, audio and binary
resources become a one-line summary (the model cannot read base64); embedded text
resources keep their text under a header naming the URI. A result with no content but
structured content shows that as JSON. ``isError`` results become failed outcomes.
"""

from __future__ import annotations

import json

import mcp_types as types

from acpwire.agent.embedded.tools.base import ToolOutcome, failure

NO_CONTENT = "(the MCP tool returned no content)"


def _size(data: str) -> str:
    # base64 carries 3 bytes per 4 characters.
    return f"about {len(data) * 3 // 4} bytes"


def _resource_link(block: types.ResourceLink) -> str:
    details = [block.name]
    if block.mime_type:
        details.append(block.mime_type)
    return f"[resource link: {block.uri} ({', '.join(details)})]"


def _embedded(block: types.EmbeddedResource) -> str:
    resource = block.resource
    if isinstance(resource, types.TextResourceContents):
        return f"[resource {resource.uri}]\n{resource.text}"
    mime = resource.mime_type or "unknown type"
    return f"[binary resource {resource.uri}: {mime}, {_size(resource.blob)}]"


def describe_block(block: types.ContentBlock) -> str:
    """One content block as text."""
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent):
        return f"[image: {block.mime_type}, {_size(block.data)}]"
    if isinstance(block, types.AudioContent):
        return f"[audio: {block.mime_type}, {_size(block.data)}]"
    if isinstance(block, types.ResourceLink):
        return _resource_link(block)
    if isinstance(block, types.EmbeddedResource):
        return _embedded(block)
    # A content type newer than this code: name it rather than drop it.
    kind = getattr(block, "type", type(block).__name__)
    return f"[{kind} content]"


def result_text(result: types.CallToolResult) -> str:
    parts = [describe_block(block) for block in result.content]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


def outcome_from_result(result: types.CallToolResult) -> ToolOutcome:
    """The tool outcome for ``result``: failed when the server set ``isError``."""
    text = result_text(result)
    if result.is_error:
        return failure(text or "the MCP tool reported an error without details")
    return ToolOutcome(text or NO_CONTENT)


def describe_error(exc: BaseException) -> str:
    """A one-line account of ``exc``, looking inside exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe_error(inner) for inner in exc.exceptions)
    text = str(exc) or type(exc).__name__
    return text if type(exc).__name__ in text else f"{type(exc).__name__}: {text}"
