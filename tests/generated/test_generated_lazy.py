"""acp_v1.models and acp_v1.dispatch import each module on first use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from acp_v1 import dispatch, models as m
from acp_v1._lazy import LazyTable
from tests.generated.schema_facts import ROOT


def _loaded_after(code: str) -> list[str]:
    """The acp_v1 model and envelope modules a fresh interpreter has after ``code``."""
    probe = (
        f"{code}\nimport json, sys\n"
        "print(json.dumps(sorted(k for k in sys.modules"
        " if k.startswith(('acp_v1.models.', 'acp_v1.dispatch.')))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded: list[str] = json.loads(out.stdout.splitlines()[-1])
    return loaded


def test_importing_the_bindings_loads_no_model_module() -> None:
    code = "import acp_v1, acp_v1.models, acp_v1.methods, acp_v1.dispatch, acp_v1.peers"
    assert _loaded_after(code + ", acp_v1.interfaces") == []


def test_a_name_loads_its_module_and_the_earlier_ones_it_needs() -> None:
    assert _loaded_after("from acp_v1.models import InitializeRequest") == [
        "acp_v1.models.connection"
    ]
    loaded = _loaded_after("from acp_v1 import models as m; m.SessionNotification")
    assert "acp_v1.models.prompt" in loaded and "acp_v1.models.client" not in loaded


def test_the_backend_loads_only_the_initialize_models_at_import() -> None:
    assert _loaded_after("import acpwire.server.stdio") == ["acp_v1.models.connection"]


def test_facade_names_are_the_defining_modules_objects() -> None:
    import acp_v1.models.prompt as prompt

    assert m.SessionNotification is prompt.SessionNotification
    assert m.SessionNotification.__module__ == "acp_v1.models.prompt"
    assert set(m.__all__) == set(m.WHERE) and "SessionNotification" in dir(m)
    namespace: dict[str, object] = {}
    exec("from acp_v1.models import *", namespace)
    assert namespace["ContentBlockText"] is m.ContentBlockText


def test_unknown_names_raise_attribute_error() -> None:
    # (mypy rejects these statically: the facades declare exactly their names.)
    model, envelope = "NoSuchModel", "NoSuchEnvelope"
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchModel'"):
        getattr(m, model)
    with pytest.raises(AttributeError, match="NoSuchEnvelope"):
        getattr(dispatch, envelope)


def test_envelope_tables_are_lazy_mappings() -> None:
    table = dispatch.AGENT_ENVELOPES
    assert isinstance(table, LazyTable)
    assert "initialize" in table and "fs/read_text_file" not in table
    assert table["initialize"] is dispatch.InitializeRequestEnvelope
    assert table.get("no/such_method") is None
    assert (
        len(table) == len(list(table)) == len(dispatch.inbound_union("agent").__origin__.__args__)
    )


def test_inbound_aliases_are_computed_unions_of_every_envelope() -> None:
    union = dispatch.AgentInbound
    assert dispatch.AgentInbound is union  # computed once, then a plain attribute
    members = set(typing.get_args(typing.get_args(union)[0]))
    assert members == set(dispatch.AGENT_ENVELOPES.values())


def test_answering_initialize_loads_only_the_connection_modules(tmp_path: Path) -> None:
    """The real backend on stdio, one initialize request, then end of input."""
    script = (
        "import atexit, json, sys\n"
        "atexit.register(lambda: sys.stderr.write('LOADED ' + json.dumps(sorted(k for k in"
        " sys.modules if k.startswith(('acp_v1.models.', 'acp_v1.dispatch.')))) + '\\n'))\n"
        "from acpwire.cli import main\n"
        "main([])\n"
    )
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    env = {**os.environ, "ACPWIRE_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(request) + "\n",
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    answer = json.loads(done.stdout.splitlines()[0])
    assert answer["id"] == 1 and answer["result"]["protocolVersion"] == 1
    loaded = next(line for line in done.stderr.splitlines() if line.startswith("LOADED "))
    assert json.loads(loaded.removeprefix("LOADED ")) == [
        "acp_v1.dispatch.connection",
        "acp_v1.models.connection",
    ]
