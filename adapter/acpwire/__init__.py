"""acpwire: serve a synchronous, tool-using Python agent to editors over the Agent Client Protocol."""

__version__ = "0.1.0"
"""Kept equal to ``project.version`` in pyproject.toml (a test checks)."""

__all__ = ["__version__"]
