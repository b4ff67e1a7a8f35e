"""Benchmarks of acpwire side by side with its anchors: ``python -m bench`` (``make bench``).

Part A compares the wire layer with the official Python SDK (``agent-client-protocol``
0.12.1); part B compares the whole backend with ``hermes-acp`` 0.19.0, both served by the
same loopback model. Results go to ``docs/BENCHMARKS.md``. Benchmarks are never tests:
nothing here asserts a timing.
"""
