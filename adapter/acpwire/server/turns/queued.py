"""Queued prompts are stored before they are acknowledged, and never silently lost.

A prompt sent while a turn runs is answered at once ("queued") and runs after that turn.
:func:`enqueue` writes it to the store's pending prompts before the caller answers;
:func:`begin` turns it into the history's user message when its turn starts (one
transaction); :func:`settle_unrun` records the prompts a cancel dropped as not run.
A process killed with prompts still queued leaves their rows behind: the next process
to restore the session records them as not run (``SessionManager.get``). Either way
``session/load`` replays such a prompt followed by a note that it was not run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from acpwire.agent.seam import Message
from acpwire.server.sessions.state import QueuedPrompt, SessionState
from acpwire.store import NOT_RUN_CANCELLED

if TYPE_CHECKING:
    from acpwire.server.editor.backend_view import Backend

__all__ = ["begin", "enqueue", "settle_unrun"]


async def enqueue(backend: Backend, state: SessionState, queued: QueuedPrompt) -> int:
    """Put ``queued`` behind the running turn, stored when this returns; the queue's
    length. It joins the queue first (so the running turn cannot end without seeing
    it), and its turn waits until the row is written; a failed write takes it out of
    the queue again (the caller's request fails: nothing was acknowledged)."""
    queued.stored = anyio.Event()
    state.queue.append(queued)
    try:
        queued.pending_id = await backend.blocking(
            backend.manager.store.add_pending_prompt, state.id, queued.content, queued.display
        )
    except BaseException:
        state.queue = type(state.queue)(q for q in state.queue if q is not queued)
        raise
    finally:
        queued.stored.set()
    return len(state.queue)


async def begin(backend: Backend, state: SessionState, prompt: QueuedPrompt) -> None:
    """A turn starts: its prompt becomes the history's user message (replacing its
    pending row, if it has one, in the same transaction)."""
    if prompt.stored is not None:
        await prompt.stored.wait()
    user: Message = {"role": "user", "content": prompt.content}
    prompt.started = True
    manager = backend.manager
    if prompt.pending_id is None:
        await backend.blocking(manager.append_messages, state, [user])
    else:
        await backend.blocking(
            manager.store.start_pending_prompt, state.id, prompt.pending_id, user
        )


async def settle_unrun(backend: Backend, state: SessionState) -> None:
    """Record the accepted prompts that will not run (a cancel dropped them) as such."""
    if not state.unrun:
        return
    unrun, state.unrun = state.unrun, []
    with anyio.CancelScope(shield=True):  # also while the connection is torn down
        for prompt in unrun:
            if prompt.stored is not None:
                await prompt.stored.wait()
        ids = [p.pending_id for p in unrun if p.pending_id is not None and not p.started]
        if ids:
            await backend.blocking(
                backend.manager.store.settle_pending_prompts, state.id, NOT_RUN_CANCELLED, ids
            )
