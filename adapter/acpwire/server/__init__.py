"""The stdio backend: any agent served to an editor over ACP, the way data flows through it.

A prompt comes in through the agent-side methods, becomes a turn of a session, and its
updates (and what the turn asks of the editor) go out. The sub-packages, lowest first;
each imports only those before it (``tests/layers`` checks):

- :mod:`~acpwire.server.sessions`: the open sessions, their state, modes and options;
- :mod:`~acpwire.server.editor`: what a turn asks of the editor (updates, approvals,
  files, terminals, MCP servers) and what its errors mean;
- :mod:`~acpwire.server.turns`: a prompt's turn, from slash command or queue to the
  worker thread, the bridge of its callbacks, and the reports around it;
- :mod:`~acpwire.server.methods`: the ACP methods the editor calls (``initialize``,
  sessions, modes, prompts);
- :mod:`~acpwire.server.process`: the process and its start (which agent, the early
  ``initialize`` answer, the front desk, signals, shutdown).

Above them :mod:`~acpwire.server.app` assembles a connection's backend and
:mod:`~acpwire.server.stdio` runs it on stdin/stdout. This file imports nothing, so that
importing a module of the start does not load the session machinery.
"""

__all__ = ["app", "editor", "methods", "process", "sessions", "stdio", "turns"]
