"""Pydantic's plugin discovery without ``importlib.metadata``, for the ``acpwire`` process.

The first pydantic model a process builds asks pydantic for its plugins, and pydantic's
plugin loader imports ``importlib.metadata`` (``email``, ``zipfile``, ``csv`` and more:
about 25 ms here) to read the ``pydantic`` entry-point group. The backend builds its
first model for the ``initialize`` request and its next for ``session/new``, so both
answers waited for that import, while almost no installation has a pydantic plugin.

:func:`defer_plugin_discovery` reads the entry points itself, as ``importlib.metadata``
would find them: the ``entry_points.txt`` of every ``*.dist-info`` / ``*.egg-info`` in
the directories of ``sys.path``. When none names the ``pydantic`` group (or
``PYDANTIC_DISABLE_PLUGINS`` disables them all), pydantic's loader module is stood in
for by one whose ``get_plugins()`` answers no plugins; any other name asked of it loads
the real loader and answers from it. Whenever the answer is not certain (a plugin is
declared, a ``sys.path`` entry is a zip file, an import hook lists distributions of its
own, the loader is already imported), nothing is changed and pydantic discovers plugins
as always. Only the ``acpwire`` command calls it, never an import of the library.
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from collections.abc import Iterable
from typing import Any

__all__ = ["LOADER", "defer_plugin_discovery", "plugins_declared"]

LOADER = "pydantic.plugin._loader"
GROUP_LINE = "[pydantic]"
DISABLED_ALL = ("__all__", "1", "true")


def plugins_declared(path: Iterable[str]) -> bool | None:
    """Whether a distribution on ``path`` declares a ``pydantic`` entry point; ``None``
    when a ``path`` entry cannot be read the cheap way (a file, such as a zip)."""
    for entry in path:
        folder = entry or "."
        try:
            names = os.listdir(folder)
        except NotADirectoryError:
            return None
        except OSError:
            continue  # a missing directory holds no distribution
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            try:
                with open(os.path.join(folder, name, "entry_points.txt"), encoding="utf-8") as f:
                    if any(line.strip() == GROUP_LINE for line in f):
                        return True
            except (OSError, UnicodeDecodeError):
                continue  # no entry points (or an unreadable file: importlib skips it too)
    return False


def _only_path_finders() -> bool:
    """No import hook on ``sys.meta_path`` lists distributions besides the path finder."""
    from importlib.machinery import PathFinder

    return all(
        finder is PathFinder or not hasattr(finder, "find_distributions")
        for finder in sys.meta_path
    )


def _stand_in() -> types.ModuleType:
    module = types.ModuleType(LOADER, "acpwire's stand-in: no pydantic plugin is installed")

    def get_plugins() -> tuple[()]:
        return ()

    def real_attribute(name: str) -> Any:
        if name.startswith("__"):  # the import system's questions (``__path__``: a package?)
            raise AttributeError(name)
        if sys.modules.get(LOADER) is module:
            del sys.modules[LOADER]
        return getattr(importlib.import_module(LOADER), name)

    module.get_plugins = get_plugins  # type: ignore[attr-defined]
    module.__getattr__ = real_attribute  # type: ignore[method-assign]
    return module


def defer_plugin_discovery() -> bool:
    """Stand in for pydantic's plugin loader when no plugin can be installed (see the
    module); True when it did."""
    if LOADER in sys.modules:
        return False
    all_disabled = os.environ.get("PYDANTIC_DISABLE_PLUGINS") in DISABLED_ALL
    if not all_disabled and (not _only_path_finders() or plugins_declared(sys.path) is not False):
        return False
    sys.modules[LOADER] = _stand_in()
    return True
