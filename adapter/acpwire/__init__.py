"""acpwire: serve a synchronous, tool-using Python agent to editors over the Agent Client Protocol."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("acpwire")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0"

__all__ = ["__version__"]
