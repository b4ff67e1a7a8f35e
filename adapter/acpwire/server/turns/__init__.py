"""A prompt's turn: from the prompt (or a slash command, or the queue) to its updates.

:mod:`.runner` decides when turns run (queueing, steering, cancellation) over
:mod:`.reports` (what the editor and the store learn around a turn); :mod:`.commands`
answers the backend's own slash commands; :mod:`.queued` stores prompts waiting for the
running turn; :mod:`.worker` runs the agent in a worker thread, and :mod:`.bridge` turns
its callbacks into ordered updates over the thread-to-loop queue of :mod:`.handoff`.
May import: :mod:`acpwire.server.sessions`, :mod:`acpwire.server.editor` and below.
"""

__all__ = ["bridge", "commands", "handoff", "queued", "reports", "runner", "worker"]
