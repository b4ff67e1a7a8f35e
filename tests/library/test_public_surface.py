"""The public surface: every package says what it exports, and every exported name loads."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = sorted(
    p for p in (ROOT / "adapter" / "acpwire").rglob("__init__.py") if "hermes" not in p.parts
)


@pytest.mark.parametrize("init", PACKAGES, ids=[str(p.parent.name) for p in PACKAGES])
def test_each_package_declares_all(init: Path) -> None:
    tree = ast.parse(init.read_text())
    names = [
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    ]
    assert "__all__" in names


RESOLVE = """
import json, sys
import acp_v1, acpwire
missing = [
    f"{mod.__name__}.{name}" for mod in (acp_v1, acpwire) for name in mod.__all__
    if getattr(mod, name, None) is None
]
print(json.dumps({"missing": missing, "server": "acpwire.server.methods.backend" in sys.modules}))
"""

LIGHT = """
import json, sys
import acp_v1, acpwire
print(json.dumps(sorted(k for k in sys.modules if k.startswith(("acpwire.", "acp_v1.")))))
"""


def test_every_exported_name_of_acp_v1_and_acpwire_resolves() -> None:
    done = subprocess.run(
        [sys.executable, "-c", RESOLVE], capture_output=True, text=True, check=True, cwd=ROOT
    )
    seen = json.loads(done.stdout)
    assert seen["missing"] == []
    import acp_v1
    import acpwire

    assert {"Agent", "Client", "AgentPeer", "ClientPeer", "models"} <= set(acp_v1.__all__)
    assert {"serve", "BaseAgent", "spawn_agent", "memory_pair", "RpcError"} <= set(acpwire.__all__)


def test_importing_the_packages_loads_only_what_they_need() -> None:
    done = subprocess.run(
        [sys.executable, "-c", LIGHT], capture_output=True, text=True, check=True, cwd=ROOT
    )
    # acpwire._exports: the lazy re-export helper (importlib and sys only); _version: a constant.
    loaded = [
        "acp_v1._lazy",
        "acp_v1.methods",
        "acp_v1.models",
        "acpwire._exports",
        "acpwire._version",
    ]
    assert json.loads(done.stdout) == loaded
