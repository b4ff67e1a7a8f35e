"""Assemble the user message a model gets from the content blocks of an ACP prompt.

Text stays text; ``file:`` resource links are read from disk (through :mod:`.sources`);
images become data URLs when the model takes images; everything that cannot be passed on
becomes a bracketed note that the model sees in place of the attachment and that is also
listed in :attr:`PromptContent.notes`, so nothing disappears silently and a bad attachment
never fails the turn.
"""

from __future__ import annotations

import base64
import logging
import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from acp_v1 import models as m
from acpwire.config.limits import ToolLimits

from .sources import (
    AttachError,
    b64decode,
    decode_utf8,
    display_name,
    file_size,
    is_image,
    is_text_mime,
    local_path,
    mime_for,
    read_capped,
)

_log = logging.getLogger(__name__)

MAX_INLINE_BYTES: Final = 512 * 1024
"""Cap on the bytes of one attached file or image that are passed to the model."""
MAX_TOTAL_BYTES: Final = ToolLimits().max_attachments_bytes
"""Default cap on all the attachments of one prompt (``[tools] max_attachments_bytes``)."""

IMAGE_PLACEHOLDER: Final = "[Image attachment]"
NO_IMAGES: Final = "[Image omitted: the model does not accept images]"

ContentPart = dict[str, Any]
"""One OpenAI chat content part: ``{"type": "text", ...}`` or ``{"type": "image_url", ...}``."""

# The formats the OpenAI-compatible vision APIs accept; SVG is text and is read as such.
_INLINE_IMAGE_MIMES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


@dataclass(frozen=True, slots=True)
class PromptContent:
    """The model's view of one prompt plus what to store and tell the user."""

    content: str | list[ContentPart]
    """A plain string when every part is text, else a list of OpenAI content parts."""
    display_text: str
    """Text for history titles and queues; attachments appear as short placeholders."""
    notes: list[str] = field(default_factory=list)
    """Human-readable notes on attachments that were omitted, cut or unreadable."""
    left_out: list[str] = field(default_factory=list)
    """The attachments left out because the prompt's total was over its cap."""

    @property
    def is_empty(self) -> bool:
        """True when there is nothing to send (no image and only blank text)."""
        if isinstance(self.content, str):
            return not self.content.strip()
        return all(p["type"] == "text" and not str(p["text"]).strip() for p in self.content)


class _Builder:
    def __init__(self, cwd: str, accepts_images: bool, max_total: int) -> None:
        self.cwd = cwd
        self.accepts_images = accepts_images
        self.max_total = max_total
        self.budget = max_total
        self.left_out: list[str] = []
        self.parts: list[ContentPart] = []
        self.display: list[str] = []
        self.notes: list[str] = []

    def text(self, text: str) -> None:
        self.parts.append({"type": "text", "text": text})

    def note(self, text: str) -> None:
        _log.info("prompt attachment: %s", text)
        self.notes.append(text)
        self.text(text)

    def fits(self, size: int, name: str) -> bool:
        """Take ``size`` bytes of the prompt's attachment budget, or note ``name`` as left out."""
        if size <= self.budget:
            self.budget -= size
            return True
        self.left_out.append(name)
        self.note(
            f"[Attachment left out: {name}: the attachments of one prompt may total"
            f" {self.max_total} bytes]"
        )
        return False

    def image_refusal(self, size: int, mime: str) -> str | None:
        if not self.accepts_images:
            return NO_IMAGES
        if mime not in _INLINE_IMAGE_MIMES:
            return f"[Image format not supported for inlining: mime={mime}, {size} bytes]"
        if size > MAX_INLINE_BYTES:
            return f"[Image too large to inline: {size} bytes, cap={MAX_INLINE_BYTES}]"
        return None

    def image(self, data: bytes, mime: str, *, label: str | None, name: str | None) -> None:
        self.display.append(IMAGE_PLACEHOLDER)
        refusal = self.image_refusal(len(data), mime)
        if refusal is not None:
            self.note(f"{refusal} ({name})" if name else refusal)
            return
        if self.fits(len(data), name or "an image"):
            self.inline_image(data, mime, label)

    def inline_image(self, data: bytes, mime: str, label: str | None) -> None:
        if label:
            self.text(label)
        url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
        self.parts.append({"type": "image_url", "image_url": {"url": url}})

    def body(self, data: bytes, total: int, mime: str | None, *, header: str, where: str) -> None:
        """Inline a file's bytes as text, or note that it is binary."""
        truncated = total > MAX_INLINE_BYTES or len(data) > MAX_INLINE_BYTES
        data = data[:MAX_INLINE_BYTES]
        text = decode_utf8(data, truncated)
        declared_binary = mime is not None and not is_text_mime(mime) and text is None
        if b"\x00" in data or declared_binary:
            self.note(f"[Binary file omitted: {total} bytes, mime={mime or 'unknown'}] ({where})")
            return
        if text is None:
            text = data.decode("latin-1")
        if not self.fits(len(data), where.split(": ", 1)[-1]):
            return
        if truncated:
            header += f" (truncated to {MAX_INLINE_BYTES} of {total} bytes)"
            self.notes.append(header)
        self.text(f"{header}\n{where}\n\n{text}")

    def add(self, block: m.ContentBlock) -> None:
        if isinstance(block, m.ContentBlockText):
            if block.text:
                self.display.append(block.text)
                self.text(block.text)
        elif isinstance(block, m.ContentBlockImage):
            self.add_image_block(block)
        elif isinstance(block, m.ContentBlockResourceLink):
            self.add_link(block.uri, display_name(block), block.mime_type)
        elif isinstance(block, m.ContentBlockResource):
            self.add_embedded(block)
        elif isinstance(block, m.ContentBlockAudio):
            self.display.append("[Audio attachment]")
            self.note("[Audio omitted: audio input is not supported]")
        else:
            raise TypeError(f"expected an ACP ContentBlock, got {type(block).__name__}")

    def add_image_block(self, block: m.ContentBlockImage) -> None:
        if not block.data and block.uri:
            # An image given by reference only: read it like a linked file.
            self.add_link(block.uri, posixpath.basename(block.uri) or block.uri, block.mime_type)
            return
        mime = mime_for("", block.mime_type) or "image/png"
        if not self.accepts_images:
            self.display.append(IMAGE_PLACEHOLDER)
            self.note(NO_IMAGES)
            return
        try:
            data = b64decode(block.data)
        except AttachError as exc:
            self.display.append(IMAGE_PLACEHOLDER)
            self.note(f"[Image omitted: {exc}]")
            return
        self.image(data, mime, label=None, name=None)

    def add_link(self, uri: str, display: str, declared_mime: str | None) -> None:
        try:
            path = local_path(uri, self.cwd)
        except AttachError as exc:
            self.display.append(f"[Attached file: {display}]")
            self.note(str(exc))
            return
        if path is None:
            self.display.append(f"[Resource link: {uri}]")
            self.note(f"[Resource link only: {uri}; cannot read non-file URIs directly.]")
            return
        mime = mime_for(path.name, declared_mime)
        if is_image(mime):
            assert mime is not None
            self.add_image_file(path, mime, display)
            return
        self.display.append(f"[Attached file: {display}]")
        if self.budget <= 0:  # nothing more fits: not even read
            self.fits(1, str(path))
            return
        try:
            data, total = read_capped(path, MAX_INLINE_BYTES)
        except AttachError as exc:
            self.note(f"{exc} ({display})")
            return
        self.body(data, total, mime, header=f"[Attached file: {display}]", where=f"Path: {path}")

    def add_image_file(self, path: Path, mime: str, display: str) -> None:
        self.display.append(IMAGE_PLACEHOLDER)
        data = b""
        try:
            # Check the size before reading, and again after: the file may have grown.
            refusal = self.image_refusal(file_size(path), mime)
            if refusal is None:
                data, size = read_capped(path, MAX_INLINE_BYTES)
                refusal = self.image_refusal(size, mime)
        except AttachError as exc:
            self.note(f"{exc} ({display})")
            return
        if refusal is not None:
            self.note(f"{refusal} ({display})")
            return
        if self.fits(len(data), str(path)):
            self.inline_image(data, mime, f"[Attached image: {display}]\nPath: {path}")

    def add_embedded(self, block: m.ContentBlockResource) -> None:
        resource = block.resource
        uri = resource.uri
        header = f"[Embedded resource: {uri}]"
        if not isinstance(resource, m.BlobResourceContents):
            self.display.append(header)
            data = resource.text.encode("utf-8", errors="replace")  # lone surrogates too
            self.body(data, len(data), "text/plain", header=header, where=f"URI: {uri}")
            return
        mime = mime_for(uri, resource.mime_type)
        try:
            raw = b64decode(resource.blob)
        except AttachError as exc:
            self.display.append(header)
            self.note(f"[Embedded resource omitted: {exc}: {uri}]")
            return
        if is_image(mime):
            assert mime is not None
            label = f"[Attached image: {posixpath.basename(uri) or uri}]\nURI: {uri}"
            self.image(raw, mime, label=label, name=uri)
            return
        self.display.append(header)
        self.body(raw, len(raw), mime, header=header, where=f"URI: {uri}")


def prompt_to_model_content(
    blocks: list[m.ContentBlock],
    *,
    cwd: str,
    accepts_images: bool,
    max_total_bytes: int = MAX_TOTAL_BYTES,
) -> PromptContent:
    """Build the model's user content from a prompt's blocks.

    ``cwd`` is the session's working directory: relative paths and ``file:`` URIs are
    resolved against it, never against the process cwd. The attachments together take at
    most ``max_total_bytes``; the rest are left out (``left_out``) with a note. Unreadable, binary, oversized or
    unsupported attachments become notes; this function only raises for a list item that is
    not a content block at all (a programming error).
    """
    builder = _Builder(cwd, accepts_images, max_total_bytes)
    for block in blocks:
        builder.add(block)
    parts = builder.parts
    content: str | list[ContentPart]
    if all(part["type"] == "text" for part in parts):
        content = "\n".join(str(part["text"]) for part in parts)
    else:
        content = parts
    display = "\n".join(builder.display).strip()
    return PromptContent(
        content=content, display_text=display, notes=builder.notes, left_out=builder.left_out
    )


def left_out_message(names: list[str], cap: int) -> str:
    """What the user is told when attachments were left out of a prompt."""
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    return (
        f"Left out of this prompt: {shown}. The attachments of one prompt may total {cap} bytes"
        " ([tools] max_attachments_bytes); the model was told what is missing."
    )
