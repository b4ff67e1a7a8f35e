"""ACP prompt content → the user message a model gets, attachments included.

:mod:`.content` assembles the message; :mod:`.sources` reads and decodes what attachments
point at; :mod:`.capabilities` says what ``initialize`` advertises. The public names are
re-exported here and load on first access (answering ``initialize`` needs only the
capabilities).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acpwire._exports import lazy_exports

if TYPE_CHECKING:
    from .capabilities import PROMPT_CAPABILITIES
    from .content import (
        IMAGE_PLACEHOLDER,
        MAX_INLINE_BYTES,
        MAX_TOTAL_BYTES,
        ContentPart,
        PromptContent,
        left_out_message,
        prompt_to_model_content,
    )

__all__ = [
    "IMAGE_PLACEHOLDER",
    "MAX_INLINE_BYTES",
    "MAX_TOTAL_BYTES",
    "PROMPT_CAPABILITIES",
    "ContentPart",
    "PromptContent",
    "left_out_message",
    "prompt_to_model_content",
]


_WHERE = {
    **dict.fromkeys(__all__, "acpwire.attachments.content"),
    "PROMPT_CAPABILITIES": "acpwire.attachments.capabilities",
}

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__ = lazy_exports(__name__, _WHERE)
