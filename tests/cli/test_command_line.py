"""The command line's own cost: parsing imports argparse only, and a command imports its
code only when it runs (a bare ``acpwire``, what editors launch, loads no other command)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from acpwire.cli import _MODULES
from acpwire.cli._parser import COMMANDS

HEAVY = ("acp_v1", "acpwire.server", "acpwire.agent", "anyio", "pydantic", "httpx", "asyncio")

PARSE_ALL = """
import json, sys
from acpwire.cli._parser import command_of, parse
seen = [command_of(parse(argv)) for argv in json.loads(sys.argv[1])]
try:
    from acpwire.cli import main
    main(["--help"])
except SystemExit:
    pass
print(json.dumps({"commands": seen, "modules": sorted(sys.modules)}))
"""


def test_parsing_any_command_line_imports_no_backend_and_no_command() -> None:
    argvs = [
        [],
        ["serve", "--agent", "x"],
        ["--check"],
        ["self-check"],
        ["--setup", "--yes"],
        ["setup", "-y"],
        ["--hermes-setup"],
        ["hermes-setup"],
        ["--demo"],
        ["demo"],
        ["--version"],
        ["tap", "--trace", "t.jsonl", "--", "hermes-acp", "--flag"],
    ]
    done = subprocess.run(
        [sys.executable, "-c", PARSE_ALL, json.dumps(argvs)],
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["commands"] == [
        "serve",
        "serve",
        "self-check",
        "self-check",
        "setup",
        "setup",
        "hermes-setup",
        "hermes-setup",
        "demo",
        "demo",
        "version",
        "tap",
    ]
    modules: list[str] = found["modules"]
    heavy = [m for m in modules if m.split(".")[0] in HEAVY or m.startswith(HEAVY)]
    assert heavy == []
    assert [m for m in modules if m.startswith("acpwire.cli")] == [
        "acpwire.cli",
        "acpwire.cli._parser",
    ]


BARE = """
import atexit, json, sys
atexit.register(lambda: sys.stderr.write("CLI " + json.dumps(
    sorted(m for m in sys.modules if m.startswith("acpwire.cli"))) + "\\n"))
from acpwire.cli import main
raise SystemExit(main([]))
"""


@pytest.mark.subprocess
def test_a_bare_start_loads_only_the_serve_command(tmp_path: Path) -> None:
    env = {**os.environ, "ACPWIRE_HOME": str(tmp_path / "home")}
    done = subprocess.run(
        [sys.executable, "-c", BARE],
        input=b"",
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""
    line = next(x for x in done.stderr.decode().splitlines() if x.startswith("CLI "))
    assert json.loads(line[4:]) == [
        "acpwire.cli",
        "acpwire.cli._parser",
        "acpwire.cli._start",
        "acpwire.cli.serve",
    ]


def test_every_command_has_a_module_that_runs_it() -> None:
    """No command without its code (and none registered that does nothing)."""
    import importlib

    assert list(_MODULES) == list(COMMANDS)
    for command, module in _MODULES.items():
        loaded = importlib.import_module(module)
        assert callable(loaded.run), command
        assert loaded.__doc__ and f"acpwire {command}" in loaded.__doc__, command
