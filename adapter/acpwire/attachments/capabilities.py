"""What the attachment handling can take, as ``initialize`` advertises it.

Its own module so that answering ``initialize`` does not load the attachment readers
(:mod:`.content`, :mod:`.sources`); :mod:`.content` acts on the same table.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

__all__ = ["PROMPT_CAPABILITIES"]

PROMPT_CAPABILITIES: Final = MappingProxyType(
    {"image": True, "audio": False, "embeddedContext": True}
)
"""What ``initialize`` may truthfully advertise as ``promptCapabilities``."""
