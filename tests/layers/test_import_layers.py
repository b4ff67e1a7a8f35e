"""Layers point one way: schema -> codegen -> generated -> runtime -> adapter.

Checked on the source with ``ast``: every import statement of each layer, including
imports inside functions, against what that layer may import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# (folder, package prefixes it must never import)
RULES: list[tuple[str, tuple[str, ...]]] = [
    ("codegen", ("acp_v1", "acpwire")),
    ("generated/acp_v1", ("acpwire", "codegen")),
    (
        "adapter/acpwire/rpc",
        ("acp_v1", "acpwire.server", "acpwire.agent", "acpwire.store", "codegen"),
    ),
    (
        "adapter/acpwire/agent",
        ("acp_v1", "acpwire.server", "acpwire.rpc", "acpwire.store", "acpwire.render"),
    ),
    ("adapter/acpwire/store", ("acp_v1", "acpwire.server", "acpwire.rpc", "acpwire.agent")),
    ("adapter/acpwire/render", ("acpwire.server", "acpwire.rpc", "acpwire.store")),
    ("adapter/acpwire/probe", ("acpwire.server", "acpwire.agent", "acpwire.store")),
    # The protocol checker and the conformance run: bindings, the probe's reading of
    # capabilities, the loopback model (devtools); no runtime, no command line.
    (
        "adapter/acpwire/conformance",
        (
            "acpwire.rpc",
            "acpwire.server",
            "acpwire.agent",
            "acpwire.store",
            "acpwire.cli",
            "anyio",
            "httpx",
        ),
    ),
    ("adapter/acpwire/approval", ("acpwire.server", "acpwire.rpc")),
    ("adapter/acpwire/mcp", ("acpwire.server",)),
    # The tap starts on the standard library alone (docs/TAP.md): of the configuration
    # it reads only the stdlib leaves ``acpwire.config.home`` and ``.secret_names``
    # (tests/cli/test_tap.py lists every module it loads).
    (
        "adapter/acpwire/cli/tap",
        (
            "acp_v1",
            "pydantic",
            "anyio",
            "httpx",
            "acpwire.server",
            "acpwire.config.settings",
            "acpwire.config.environment",
            "acpwire.config.limits",
            "acpwire.config.logs",
            "acpwire.config.paths",
            "acpwire.config.private",
        ),
    ),
    ("adapter/acpwire", ("codegen",)),
]


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


@pytest.mark.parametrize(("folder", "forbidden"), RULES, ids=[r[0] for r in RULES])
def test_layer_imports_point_one_way(folder: str, forbidden: tuple[str, ...]) -> None:
    files = sorted((ROOT / folder).rglob("*.py"))
    assert files, f"no sources under {folder}"
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in files
        for line, name in _imports(path)
        if any(name == p or name.startswith(p + ".") for p in forbidden)
    ]
    assert not bad, "\n".join(bad)


def test_no_module_inside_the_package_imports_the_facade() -> None:
    """``acpwire/__init__.py`` re-exports from the modules below it; they read what they
    need (the version: ``acpwire._version``) from the defining module, never the façade."""
    package = ROOT / "adapter/acpwire"
    bad = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted(package.rglob("*.py"))
        if path != package / "__init__.py"
        for line, name in _imports(path)
        if name == "acpwire"  # `import acpwire`, `from acpwire import ...`
    ]
    assert not bad, "imports the acpwire façade: " + ", ".join(bad)


def test_only_the_entry_point_imports_the_command_line() -> None:
    """The command line sits on top: no library or backend module imports ``acpwire.cli``."""
    package = ROOT / "adapter/acpwire"
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in sorted(package.rglob("*.py"))
        if package / "cli" not in path.parents and path != package / "__main__.py"
        for line, name in _imports(path)
        if name == "acpwire.cli" or name.startswith("acpwire.cli.")
    ]
    assert not bad, "\n".join(bad)
