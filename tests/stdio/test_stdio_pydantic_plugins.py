"""Pydantic plugins in the ``acpwire`` process (acpwire.server.process.pydantic_plugins).

Without a plugin installed the backend never imports ``importlib.metadata`` (it cost
about 25 ms before ``initialize`` and again before ``session/new``); with one installed,
pydantic finds and runs it as always, in the real backend. The stand-in is checked in
fresh interpreters, since a test process has long imported pydantic's own loader.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from acpwire.server.process.pydantic_plugins import plugins_declared
from tests.stdio.stdio_support import ACPWIRE, STEP_TIMEOUT, child_env, raw_child, write_home

pytestmark = pytest.mark.subprocess

INIT = {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "t", "version": "1"}}

PLUGIN = '''
import os


class Recorder:
    """A pydantic plugin: writes the name of every type pydantic builds a validator for."""

    def new_schema_validator(self, schema, schema_type, schema_type_path, schema_kind, config,
                             plugin_settings):
        with open(os.environ.get("PLUGIN_LOG", os.devnull), "a", encoding="utf-8") as log:
            log.write(getattr(schema_type, "__name__", str(schema_type)) + "\\n")
        return None, None, None


plugin = Recorder()
'''


def _plugin_site(root: Path, *, group: str = "pydantic") -> Path:
    """A directory holding an installed distribution that declares a plugin in ``group``."""
    site = root / "site"
    info = site / "recorder_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: recorder-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{group}]\nrecorder = recorder_plugin:plugin\n")
    (site / "recorder_plugin.py").write_text(PLUGIN)
    return site


def test_declared_plugins_are_found_in_dist_and_egg_info(tmp_path: Path) -> None:
    site = _plugin_site(tmp_path)
    assert plugins_declared([str(tmp_path / "missing"), str(site)]) is True
    other = _plugin_site(tmp_path / "other", group="console_scripts")
    assert plugins_declared([str(other)]) is False
    egg = tmp_path / "eggs" / "old.egg-info"
    egg.mkdir(parents=True)
    (egg / "entry_points.txt").write_text("[console_scripts]\nx = y:z\n\n  [pydantic]  \n")
    assert plugins_declared([str(other), str(egg.parent)]) is True


def test_a_zip_on_the_path_leaves_the_answer_to_pydantic(tmp_path: Path) -> None:
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("mod.py", "")
    assert plugins_declared([str(archive)]) is None


def _fresh(
    code: str, *, pythonpath: Path | None = None, disable: str | None = None
) -> dict[str, Any]:
    """Run ``code`` (which prints one JSON line last) in a new interpreter."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    if disable is not None:
        env["PYDANTIC_DISABLE_PLUGINS"] = disable
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.splitlines()[-1]))


PROBE = """
import json, sys
from acpwire.server.process.pydantic_plugins import defer_plugin_discovery
stood_in = defer_plugin_discovery()
from acp_v1 import models as m
m.InitializeRequest.model_validate_json(b'{"protocolVersion": 1}')
metadata = "importlib.metadata" in sys.modules
import pydantic.plugin._loader as loader  # any other name loads the real loader
print(json.dumps({"stood_in": stood_in, "metadata": metadata, "plugins": None if loader._plugins is None else sorted(loader._plugins)}))
"""


def test_no_plugin_installed_means_no_importlib_metadata() -> None:
    seen = _fresh(PROBE)
    assert seen == {"stood_in": True, "metadata": False, "plugins": None}


def test_an_installed_plugin_is_left_to_pydantic(tmp_path: Path) -> None:
    site = _plugin_site(tmp_path)
    seen = _fresh(PROBE, pythonpath=site)
    assert seen["stood_in"] is False
    assert seen["metadata"] is True
    assert list(seen["plugins"]) == ["recorder_plugin:plugin"]


def test_plugins_disabled_for_all_need_no_discovery(tmp_path: Path) -> None:
    site = _plugin_site(tmp_path)
    seen = _fresh(PROBE, pythonpath=site, disable="__all__")
    assert seen == {"stood_in": True, "metadata": False, "plugins": None}


def test_a_loader_already_imported_is_kept() -> None:
    code = PROBE.replace(
        "from acpwire.server.process.pydantic_plugins",
        "import pydantic.plugin._loader\nfrom acpwire.server.process.pydantic_plugins",
    )
    assert _fresh(code)["stood_in"] is False


@pytest.mark.anyio
async def test_the_backend_runs_an_installed_plugin(tmp_path: Path) -> None:
    """End to end: the real backend with a plugin on its path builds its models through it."""
    import anyio

    site = _plugin_site(tmp_path)
    log = tmp_path / "plugin.log"
    home = write_home(tmp_path / "home", "http://127.0.0.1:9/v1")
    env = child_env(home) | {"PYTHONPATH": str(site), "PLUGIN_LOG": str(log)}
    work = tmp_path / "work"
    work.mkdir()
    async with raw_child(ACPWIRE, env=env, stderr_path=tmp_path / "stderr.log") as peer:
        with anyio.fail_after(STEP_TIMEOUT):
            answer = await peer.call("initialize", INIT)
            assert answer["result"]["protocolVersion"] == 1
            await peer.call("session/new", {"cwd": str(work), "mcpServers": []})
        assert await peer.finish() == 0
    built = log.read_text().split()
    assert any("Initialize" in name for name in built), built
    assert any("NewSession" in name for name in built), built


@pytest.mark.anyio
async def test_the_backend_without_plugins_never_imports_importlib_metadata(
    tmp_path: Path,
) -> None:
    """The whole life of a backend (start, initialize, a session): Python's own import log
    (``PYTHONPROFILEIMPORTTIME``) never names ``importlib.metadata``."""
    import anyio

    home = write_home(tmp_path / "home", "http://127.0.0.1:9/v1")
    env = child_env(home) | {"PYTHONPROFILEIMPORTTIME": "1"}
    work = tmp_path / "work"
    work.mkdir()
    stderr = tmp_path / "stderr.log"
    async with raw_child(ACPWIRE, env=env, stderr_path=stderr) as peer:
        with anyio.fail_after(STEP_TIMEOUT):
            await peer.call("initialize", INIT)
            await peer.call("session/new", {"cwd": str(work), "mcpServers": []})
        assert await peer.finish() == 0
    imported = [line.rsplit("|", 1)[-1].strip() for line in stderr.read_text().splitlines()]
    assert "acp_v1.models.setup" in imported  # the log is there, and names what was loaded
    assert "importlib.metadata" not in imported
