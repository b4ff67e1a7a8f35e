"""codegen.layout: which module of acp_v1.models (and acp_v1.dispatch) holds what."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from codegen.ir import Method, SchemaSet, methods
from codegen.layout import GROUPS, assign, method_group, qualify
from codegen.shape import shape

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "generated" / "acp_v1" / "models"
ORDER = [g.module for g in GROUPS]


@pytest.mark.parametrize(
    ("method", "module"),
    [
        ("initialize", "connection"),
        ("authenticate", "session"),
        ("auth/status", "session"),
        ("$/cancel_request", "session"),
        ("session/new", "setup"),
        ("session/fork", "session"),
        ("session/load", "session"),
        ("session/prompt", "prompt"),
        ("session/update", "prompt"),
        ("session/request_permission", "client"),
        ("fs/read_text_file", "client"),
        ("terminal/create", "client"),
        ("providers/list", "extras"),
        ("some/future_method", "extras"),
    ],
)
def test_method_group_exact_names_win_over_prefixes(method: str, module: str) -> None:
    assert method_group(method) == module


def _defs(**defs: dict[str, object]) -> dict[str, object]:
    return dict(defs)


def test_a_definition_goes_to_the_first_group_that_reaches_it() -> None:
    defs = _defs(
        InitializeRequest={"properties": {"info": {"$ref": "#/$defs/Implementation"}}},
        InitializeResponse={"type": "object"},
        Implementation={"type": "object"},
        NewSessionRequest={"properties": {"info": {"$ref": "#/$defs/Implementation"}}},
        NewSessionResponse={"properties": {"mode": {"$ref": "#/$defs/Mode"}}},
        Mode={"type": "object"},
        Orphan={"type": "object"},
    )
    table = [
        Method("session/new", "agent", "request", "NewSessionRequest", "NewSessionResponse", False),
        Method("initialize", "agent", "request", "InitializeRequest", "InitializeResponse", False),
    ]
    placed = assign(defs, table)
    assert placed == {
        "InitializeRequest": "connection",
        "InitializeResponse": "connection",
        "Implementation": "connection",  # shared with session/new: the earlier group
        "NewSessionRequest": "setup",
        "NewSessionResponse": "setup",
        "Mode": "setup",
        "Orphan": "extras",
    }


def test_qualify_names_definitions_and_hoists_titled_members() -> None:
    shaped = {
        "$defs": {
            "Block": {
                "oneOf": [
                    {"title": "BlockText", "properties": {"text": {"type": "string"}}},
                    {"title": "Plain", "allOf": [{"$ref": "#/$defs/Text"}]},
                ]
            },
            "Text": {"properties": {"title": {"type": "string", "title": "Title"}}},
        }
    }
    layout = qualify(shaped, {"Block": "prompt", "Text": "session"})
    defs = layout.schema["$defs"]
    assert set(defs) == {"prompt.Block", "prompt.BlockText", "session.Text"}
    assert defs["prompt.Block"]["oneOf"][0] == {"$ref": "#/$defs/prompt.BlockText"}
    # A titled reference stays the referenced type; a property named "title" is kept.
    assert defs["prompt.Block"]["oneOf"][1]["allOf"] == [{"$ref": "#/$defs/session.Text"}]
    assert defs["session.Text"]["properties"]["title"]["title"] == "Title"
    assert layout.placed == {"Block": "prompt", "Text": "session", "BlockText": "prompt"}
    assert layout.modules == ("session", "prompt")


def test_qualify_refuses_two_classes_of_one_name() -> None:
    member = {"title": "Text", "properties": {"a": {"type": "string"}}}
    with pytest.raises(ValueError, match="both named Text"):
        qualify({"$defs": {"Text": {}, "Block": {"oneOf": [member]}}}, {"Text": "a", "Block": "a"})


def test_initialize_needs_only_the_connection_module() -> None:
    schemas = SchemaSet.load(ROOT / "schema")
    table = methods(schemas)
    placed = assign(shape(schemas.unstable)["$defs"], table)
    init = next(m for m in table if m.name == "initialize")
    assert placed[init.params] == placed[str(init.result)] == "connection"
    assert {"SessionNotification", "ContentBlock", "RequestPermissionRequest"}.isdisjoint(
        name for name, module in placed.items() if module == "connection"
    )


def test_session_new_needs_only_the_connection_and_setup_modules() -> None:
    """An editor's first ``session/new`` loads two small modules, not the session family."""
    schemas = SchemaSet.load(ROOT / "schema")
    table = methods(schemas)
    placed = assign(shape(schemas.unstable)["$defs"], table)
    new = next(m for m in table if m.name == "session/new")
    assert placed[new.params] == placed[str(new.result)] == "setup"
    setup = {name for name, module in placed.items() if module == "setup"}
    assert {"McpServer", "SessionModeState", "SessionConfigOption"} <= setup
    assert {"LoadSessionRequest", "ListSessionsResponse", "SessionNotification"}.isdisjoint(setup)


def test_generated_modules_import_only_earlier_modules() -> None:
    """No import cycles: each model module imports its own group's predecessors only."""
    for path in sorted(MODELS.glob("*.py")):
        if path.name == "__init__.py":
            continue
        own = ORDER.index(path.stem)
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                assert ORDER.index(node.module) < own, f"{path.name} imports {node.module}"
