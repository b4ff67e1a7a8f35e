"""Offline tools shipped with acpwire: the loopback model server used by the tests,
the demo and the benchmarks."""

__all__ = ["fake_llm"]
