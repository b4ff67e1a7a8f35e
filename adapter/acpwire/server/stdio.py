"""Run the backend on the process's stdin/stdout (what an editor launches)."""

from __future__ import annotations

import logging

from acpwire.config import Settings
from acpwire.rpc import stdio_streams

from .app import Runtime, serve

logger = logging.getLogger(__name__)


async def run_stdio(settings: Settings, unstable: bool = True) -> None:
    runtime = Runtime.create(settings)
    logger.info("acpwire serving ACP on stdio (config home %s)", settings.home)
    try:
        async with stdio_streams() as (receive, send):
            await serve(runtime, receive, send, unstable=unstable)
    finally:
        runtime.close()
