"""The package version, in a module of its own: modules inside acpwire read it here,
never through the package façade (``acpwire.__version__`` re-exports it)."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
"""Kept equal to ``project.version`` in pyproject.toml (a test checks)."""
