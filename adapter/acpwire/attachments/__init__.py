"""ACP prompt content → the user message a model gets, attachments included.

:mod:`.content` assembles the message; :mod:`.sources` reads and decodes what attachments
point at. The public names are re-exported here.
"""

from .content import (
    IMAGE_PLACEHOLDER,
    MAX_INLINE_BYTES,
    MAX_TOTAL_BYTES,
    PROMPT_CAPABILITIES,
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
