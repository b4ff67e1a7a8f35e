"""Background threads the backend lets finish before the interpreter shuts down.

A daemon thread still inside a system call when the interpreter finalizes can crash
the process: SIGSEGV or SIGABRT at exit, seen with the model look-up's sockets (about
one exit in twenty under load when a client left during local discovery) and with the
sandbox probe's fork/exec. At the end of ``acpwire`` the process therefore waits a
little for the threads named in :data:`HELPER_THREADS`; any still running then cannot
be waited for safely, so the process ends without finalizing (``os._exit``) once its
logs and streams are flushed. Everything the backend must keep (the session database,
stdout) is closed before this point.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from typing import Final, NoReturn

__all__ = ["HELPER_THREADS", "HELPER_WAIT_S", "exit_now", "wait_for_helpers"]

HELPER_THREADS: Final = (
    "acpwire-models",
    "acpwire-sandbox-probe",
    "acpwire-db-check",
    "acpwire-llm",
)
"""Names of the threads started for background work (look-up, probes, model streams)."""
HELPER_WAIT_S: Final = 3.0
"""How long, in all, exit waits for them."""

logger = logging.getLogger(__name__)


def wait_for_helpers(timeout: float = HELPER_WAIT_S) -> list[str]:
    """Join the running helper threads within ``timeout`` seconds in all; the names of
    those still running afterwards."""
    deadline = time.monotonic() + timeout
    left: list[str] = []
    for thread in threading.enumerate():
        if thread is threading.current_thread() or thread.name not in HELPER_THREADS:
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            left.append(thread.name)
    return left


def exit_now(code: int, left: list[str]) -> NoReturn:
    """End the process at once (no finalization), after flushing logs and streams."""
    logger.warning("exiting without waiting for %s (still running)", ", ".join(sorted(left)))
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # already closed
            stream.flush()
    os._exit(code)
