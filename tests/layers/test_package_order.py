"""The adapter's packages in one order, lowest first: imports point down it, never round.

Every module of ``adapter/acpwire`` belongs to the longest entry of :data:`LAYERS` that
names it or a package above it (the façade ``acpwire`` names only its ``__init__.py``).
Checked on the source with ``ast``, imports inside functions included:

- no import points up the list (an ``if TYPE_CHECKING:`` import neither: it is exempt
  from nothing but being run);
- no modules import each other in a circle, inside a package or across packages;
- no packages do either, below the list's entries too (``agent.tools`` and
  ``cli.tap`` against their siblings; a package and the package it sits in are one).

docs/ARCHITECTURE.md draws the same list ("The order of the packages"); a test keeps the
two in step.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = ROOT / "adapter"
PACKAGE = ADAPTER / "acpwire"

LAYERS: list[str] = [
    # Leaves of the package, stdlib only: the version, the façades' lazy re-exports.
    "acpwire._version",
    "acpwire._exports",
    "acpwire.registry",
    "acpwire.devtools",
    # The configuration: where the home is, settings, limits, private files, paths, the
    # scrubbed environment and which names look like credentials.
    "acpwire.config",
    # The protocol layer: JSON-RPC, what a connection may use, the typed ACP runtime.
    "acpwire.rpc",
    "acpwire.probe",
    "acpwire.link",
    # Conformance: the protocol checker (the tap's, a conformance run's).
    "acpwire.conformance",
    # What the backend is built from: storage, the agent seam and the embedded agent,
    # prompt content, rendering, approval policy, the sandbox, MCP servers, Hermes.
    "acpwire.store",
    "acpwire.agent",
    "acpwire.attachments",
    "acpwire.render",
    "acpwire.approval",
    "acpwire.sandbox",
    "acpwire.mcp",
    "acpwire.hermes",
    # The backend, the way a prompt flows: sessions, the editor, turns, the methods,
    # the process; then its assembly and stdio entry (acpwire.server.app, .stdio).
    "acpwire.server.sessions",
    "acpwire.server.editor",
    "acpwire.server.turns",
    "acpwire.server.methods",
    "acpwire.server.process",
    "acpwire.server",
    # The public façade, the command line, ``python -m acpwire``.
    "acpwire",
    "acpwire.cli",
    "acpwire.__main__",
]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ADAPTER).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _targets(name: str, path: Path) -> Iterator[tuple[int, str, bool]]:
    """(line, module imported, under ``if TYPE_CHECKING:``) for every import of the
    package in the module, at any depth; ``from a import b`` is ``a.b`` when that is a
    module, else ``a``."""
    modules = _modules()
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]

    def walk(node: ast.AST, typing_only: bool) -> Iterator[tuple[int, str, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    yield from walk_one(stmt, True)
                for stmt in child.orelse:
                    yield from walk_one(stmt, typing_only)
            else:
                yield from walk_one(child, typing_only)

    def walk_one(node: ast.AST, typing_only: bool) -> Iterator[tuple[int, str, bool]]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, typing_only
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                yield node.lineno, sub if sub in modules else module, typing_only
        yield from walk(node, typing_only)

    for line, target, typing_only in walk(ast.parse(path.read_text(), str(path)), False):
        if target in modules and target != name:
            yield line, target, typing_only


@cache
def _edges() -> dict[str, dict[str, tuple[int, bool]]]:
    """Module -> module imported -> (first line, only under TYPE_CHECKING)."""
    edges: dict[str, dict[str, tuple[int, bool]]] = {}
    for name, path in _modules().items():
        out = edges.setdefault(name, {})
        for line, target, typing_only in _targets(name, path):
            seen = out.get(target)
            if seen is None or (seen[1] and not typing_only):
                out[target] = (line, typing_only)
    return edges


def layer_of(module: str) -> str | None:
    """The entry of :data:`LAYERS` a module belongs to: the longest that names it or a
    package above it (``acpwire`` itself names only the façade)."""
    found = None
    for entry in LAYERS:
        inside = module == entry or (entry != "acpwire" and module.startswith(entry + "."))
        if inside and (found is None or len(entry) > len(found)):
            found = entry
    return found


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph.get(succ, ())))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def _describe(circle: list[str], graph: dict[str, dict[str, tuple[int, bool]]]) -> str:
    ties = [
        f"  {a}:{line} -> {b}" + (" (TYPE_CHECKING)" if typing_only else "")
        for a in circle
        for b, (line, typing_only) in sorted(graph.get(a, {}).items())
        if b in circle
    ]
    return " <-> ".join(circle) + "\n" + "\n".join(ties)


def test_every_module_has_a_place_in_the_list() -> None:
    assert len(set(LAYERS)) == len(LAYERS), "an entry is listed twice"
    unplaced = [name for name in _modules() if layer_of(name) is None]
    assert not unplaced, "modules no entry of LAYERS names: " + ", ".join(unplaced)
    unused = sorted(set(LAYERS) - {layer_of(name) for name in _modules()})
    assert not unused, "entries of LAYERS that hold no module: " + ", ".join(unused)


def test_no_import_points_up_the_list() -> None:
    rank = {entry: i for i, entry in enumerate(LAYERS)}
    bad = []
    for name, targets in _edges().items():
        here = layer_of(name)
        for target, (line, typing_only) in sorted(targets.items()):
            there = layer_of(target)
            if here is None or there is None or rank[there] <= rank[here]:
                continue
            kind = " (under TYPE_CHECKING)" if typing_only else ""
            bad.append(f"{_modules()[name].relative_to(ROOT)}:{line} imports {target}{kind}")
    assert not bad, "imports that point up the list (LAYERS):\n" + "\n".join(bad)


def test_no_modules_import_each_other_in_a_circle() -> None:
    edges = _edges()
    circles = _circles({a: set(b) for a, b in edges.items()})
    assert not circles, "\n".join(_describe(c, edges) for c in circles)


def _package_of(module: str) -> str:
    return module if _modules()[module].name == "__init__.py" else module.rpartition(".")[0]


def test_no_packages_import_each_other_in_a_circle() -> None:
    """Folders as a whole (a package with its own modules, not its sub-packages); a
    package and one it sits in count as one (the façade of a package may name its
    parts, and they the package's seam)."""
    ties: dict[str, dict[str, tuple[int, bool]]] = {}
    for name, targets in _edges().items():
        mine = _package_of(name)
        for target, info in targets.items():
            theirs = _package_of(target)
            nested = theirs.startswith(mine + ".") or mine.startswith(theirs + ".")
            if theirs != mine and not nested:
                ties.setdefault(mine, {}).setdefault(theirs, info)
    circles = _circles({a: set(b) for a, b in ties.items()})
    assert not circles, "\n".join(_describe(c, ties) for c in circles)


MAX_MODULES = 12


def test_no_folder_holds_more_than_twelve_modules() -> None:
    counts = {
        str(folder.relative_to(ROOT)): len(
            [p for p in folder.glob("*.py") if p.name != "__init__.py"]
        )
        for folder in sorted({path.parent for path in _modules().values()})
    }
    crowded = [f"{folder}: {count}" for folder, count in counts.items() if count > MAX_MODULES]
    assert not crowded, f"folders of more than {MAX_MODULES} modules: " + ", ".join(crowded)


ROOT_MODULES = {
    # The public façade and ``python -m acpwire``.
    "__init__.py",
    "__main__.py",
    # Stdlib leaves: the version (read by every module that needs it, never from the
    # façade) and the lazy re-exports of the package façades.
    "_version.py",
    "_exports.py",
}


def test_the_package_root_holds_only_what_is_listed() -> None:
    """Anything else goes into the sub-package of its role (config, server, cli...)."""
    found = {path.name for path in PACKAGE.glob("*.py")}
    assert found == ROOT_MODULES, (
        f"new: {sorted(found - ROOT_MODULES)}, gone: {sorted(ROOT_MODULES - found)}"
    )


def _drawn_in_architecture() -> list[str]:
    text = (ROOT / "docs/ARCHITECTURE.md").read_text()
    section = text.split("## The order of the packages", 1)[1]
    block = re.search(r"```text\n(.*?)```", section, re.S)
    assert block is not None, "docs/ARCHITECTURE.md: no ```text block under its heading"
    return [line.split()[0] for line in block.group(1).splitlines() if line.strip()]


def test_architecture_draws_the_same_order() -> None:
    """The drawing stands highest first (the way a house is drawn): read it upside down."""
    assert list(reversed(_drawn_in_architecture())) == LAYERS
