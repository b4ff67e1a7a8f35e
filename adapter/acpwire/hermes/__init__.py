"""The real Hermes ``AIAgent`` (hermes-agent 0.19.0) behind the seam, when it is installed.

Hermes' agent is synchronous and reports through callback attributes it calls on its own
threads; :class:`HermesAgent` translates them to the seam's
:class:`~acpwire.agent.seam.TurnHooks`, fixing on this side what the Hermes ACP adapter
gets wrong. Modules:

- :mod:`~acpwire.hermes.modules`: :func:`available` and lazy imports of Hermes' modules;
- :mod:`~acpwire.hermes.results`: Hermes' values (arguments, todos, usage, turn results)
  in the seam's terms;
- :mod:`~acpwire.hermes.boundary`: the one boundary: every Hermes tool call judged, and
  the file and command tools run, by acpwire's own tools and policy;
- :mod:`~acpwire.hermes.turn`: tool-call ids, callbacks and the bindings of a turn;
- :mod:`~acpwire.hermes.agent`: :class:`HermesAgent`, the ``SyncAgent``;
- :mod:`~acpwire.hermes.factory`: :class:`HermesAgentFactory`, one agent per session.

Everything Hermes-specific is imported lazily and typed ``Any``, so these modules import
cheaply and type-check without Hermes. This package's own module imports nothing: the
backend asks :func:`~acpwire.hermes.modules.available` at start-up and loads the rest
only when it serves Hermes.
"""
