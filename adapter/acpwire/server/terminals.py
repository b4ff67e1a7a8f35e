"""Shell commands in the editor's own terminal (``terminal/*``), embedded in the tool call.

Used only when the client advertises ``terminal``. The editor runs the planned argv in the
session cwd: the bubblewrap command line when the command is sandboxed, else ``env -i``
with the scrubbed environment and ``bash -c``, so the editor's terminal gets the same
sandbox and the same secret-free environment as a local run. The tool call shows the live
terminal; a turn cancel or the tool timeout kills it; the terminal is always released. A
client that does not implement ``terminal/create`` (``-32601``) falls back to the agent's
local runner (None); any other error answer is the editor's refusal and final: the
command is not run locally.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import anyio

from acp_v1 import models as m
from acpwire.agent.seam import CommandPlan, EditorRefused
from acpwire.render import terminal_content

from .editor_errors import editor_refusal, is_not_offered

if TYPE_CHECKING:
    from .services import SessionServices

logger = logging.getLogger(__name__)
OUTPUT_LIMIT = 64 * 1024
TIMEOUT_EXIT = 124
INTERRUPTED_EXIT = 130
"""A command killed by a cancel, when the editor reports no exit code (128 + SIGINT, as a
shell reports Ctrl-C): never the timeout's 124."""
POLL_S = 0.2


async def run_in_client_terminal(
    services: SessionServices,
    call_id: str,
    command: str,
    cwd: str,
    timeout: float,
    plan: CommandPlan,
) -> tuple[int, str] | EditorRefused | None:
    client = services.backend.client
    sid = services.state.id
    if not plan.argv:
        raise ValueError("a command plan for the editor's terminal needs its argv")
    try:
        created = await client.terminal_create(
            m.CreateTerminalRequest(
                session_id=sid,
                command=plan.argv[0],
                args=list(plan.argv[1:]),
                cwd=cwd,
                output_byte_limit=OUTPUT_LIMIT,
            )
        )
    except Exception as exc:
        if is_not_offered(exc):
            logger.info("editor does not implement terminal/create; running locally")
            return None
        logger.info("editor refused the terminal (%s): the command fails", exc)
        return editor_refusal(f"run `{command}`", exc)
    terminal_id = created.terminal_id
    note = ""
    try:
        await services.send(
            m.SessionUpdateToolCallUpdate(
                tool_call_id=call_id, status="in_progress", content=[terminal_content(terminal_id)]
            )
        )
        exit_code: int | None = None
        with anyio.move_on_after(timeout) as deadline:
            async with anyio.create_task_group() as tg:

                async def wait() -> None:
                    nonlocal exit_code
                    done = await client.terminal_wait_for_exit(
                        m.WaitForTerminalExitRequest(session_id=sid, terminal_id=terminal_id)
                    )
                    exit_code = done.exit_code if done.exit_code is not None else 1
                    tg.cancel_scope.cancel()

                async def watch_cancel() -> None:
                    while not services.state.cancel_requested:
                        await anyio.sleep(POLL_S)
                    tg.cancel_scope.cancel()

                tg.start_soon(wait)
                tg.start_soon(watch_cancel)
        if exit_code is None:
            note = "\n[command interrupted]" if services.state.cancel_requested else ""
            if deadline.cancelled_caught:
                note = f"\n[command timed out after {timeout:g}s and was killed]"
            await client.terminal_kill(
                m.KillTerminalRequest(session_id=sid, terminal_id=terminal_id)
            )
        output = await client.terminal_output(
            m.TerminalOutputRequest(session_id=sid, terminal_id=terminal_id)
        )
        truncated = "\n[output truncated by the editor]" if output.truncated else ""
        code = (
            exit_code if exit_code is not None else _killed_code(output, deadline.cancelled_caught)
        )
        return code, output.output + truncated + note
    except Exception as exc:
        logger.warning("editor terminal %s failed: %s", terminal_id, exc)
        return 1, f"[the editor terminal failed: {exc}]"
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            try:
                await client.terminal_release(
                    m.ReleaseTerminalRequest(session_id=sid, terminal_id=terminal_id)
                )
            except Exception as exc:
                logger.debug("releasing terminal %s failed: %s", terminal_id, exc)


def _killed_code(output: m.TerminalOutputResponse, timed_out: bool) -> int:
    """The exit code of a command we killed: the timeout's, or what the editor reports."""
    if timed_out:
        return TIMEOUT_EXIT
    status = output.exit_status
    if status is not None and status.exit_code is not None:
        return status.exit_code
    return INTERRUPTED_EXIT
