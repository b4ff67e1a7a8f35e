"""The core (bindings and runtime) needs only pydantic and anyio; the backend's own
dependencies are the ``backend`` extra."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BACKEND_ONLY = ("httpx", "mcp", "dotenv", "starlette", "uvicorn", "httpcore")

CORE_USE = """
import json, sys
import acp_v1, acpwire, acpwire.link, acpwire.rpc, acpwire.link.builders, acpwire.probe
from acp_v1 import models as m
from acpwire import BaseAgent, SessionContext, spawn_agent  # the public names load here too
assert m.PromptResponse(stop_reason="end_turn").stop_reason == "end_turn"
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""

LIST_DISTRIBUTIONS = """
import json
from importlib.metadata import distributions
print(json.dumps([d.metadata["Name"].lower().replace("_", "-") for d in distributions()]))
"""


def test_importing_the_core_loads_none_of_the_backend_dependencies() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CORE_USE], capture_output=True, text=True, check=True, cwd=ROOT
    )
    loaded = set(json.loads(done.stdout))
    assert "acpwire" in loaded and not loaded & set(BACKEND_ONLY)


def test_the_package_requires_only_pydantic_and_anyio_without_extras() -> None:
    from importlib.metadata import requires

    always = sorted(
        re.split(r"[<>=!~;\[ ]", r)[0] for r in requires("acpwire") or [] if "extra" not in r
    )
    assert always == ["anyio", "pydantic"]


@pytest.mark.venv
def test_a_fresh_virtualenv_with_only_the_core(tmp_path: Path) -> None:
    """The project's wheel, installed without extras into a new virtualenv (pip's cache
    and configured index): the bindings and the runtime work, the backend says what is
    missing in one line."""
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "-w", str(tmp_path / "dist"), str(ROOT)], check=True
    )
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    wheel = next((tmp_path / "dist").glob("acpwire-*.whl"))
    subprocess.run([*pip, "--python", str(python), "install", str(wheel)], check=True)
    listed = subprocess.run(
        [str(python), "-c", LIST_DISTRIBUTIONS], capture_output=True, text=True, check=True
    )
    installed = set(json.loads(listed.stdout))
    assert {"acpwire", "pydantic", "anyio"} <= installed
    assert installed <= {
        "acpwire",
        "pydantic",
        "pydantic-core",
        "annotated-types",
        "typing-extensions",
        "typing-inspection",
        "anyio",
        "idna",
        "sniffio",
    }
    used = subprocess.run(
        [str(python), "-c", CORE_USE], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert not set(json.loads(used.stdout)) & set(BACKEND_ONLY)
    backend = subprocess.run(
        [str(venv / "bin" / "acpwire")], input="", capture_output=True, text=True, check=False
    )
    assert backend.returncode == 2 and backend.stdout == ""
    assert backend.stderr == (
        "acpwire: the backend needs httpx, mcp, python-dotenv, which this install lacks:"
        " pip install 'acpwire[backend]'\n"
    )
