"""Run the backend on the process's stdin/stdout (what an editor launches)."""

from __future__ import annotations

import gc
import logging
from typing import TYPE_CHECKING

import anyio

from acpwire.config import Settings
from acpwire.rpc import stdio_streams

from .front import Station, choose_factory, serve_connection

if TYPE_CHECKING:
    from .app import Runtime

logger = logging.getLogger(__name__)

SETTLE_AFTER_S = 5.0
"""The collector resumes at the latest this long after start-up began."""


def settle_gc() -> None:
    """End of start-up: what it built lives as long as the process, so the collector
    need not scan it again (``gc.freeze``); collection resumes if it was paused."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


async def run_stdio(settings: Settings, unstable: bool = True) -> None:
    """Serve the editor on stdin/stdout. The session database is opened, and the
    collector resumes (:func:`settle_gc`), once the backend is built."""
    factory = choose_factory(settings)
    made: list[Runtime] = []

    def runtime() -> Runtime:
        """Opened with the first backend (after the ``initialize`` answer), then kept."""
        if not made:
            from .app import Runtime

            made.append(Runtime.create(settings, factory))
        return made[0]

    async def settle_anyway() -> None:
        # A client that never gets as far as a backend (no initialize, no session) must
        # not leave the collector paused.
        await anyio.sleep(SETTLE_AFTER_S)
        settle_gc()

    logger.info("acpwire serving ACP on stdio (config home %s)", settings.home)
    try:
        async with stdio_streams() as (receive, send), anyio.create_task_group() as tg:
            tg.start_soon(settle_anyway)
            station = Station(factory, runtime, unstable=unstable, on_ready=settle_gc)
            await serve_connection(station, receive, send)
            tg.cancel_scope.cancel()
    finally:
        for opened in made:
            opened.close()
        gc.enable()
