"""What codegen hands datamodel-code-generator besides the schema: the per-model
template data, the extra imports and the validators table (and how shape marks the
schema's own catch-alls for it)."""

from __future__ import annotations

import pytest

from codegen.ir import Leniency, OpenUnion, open_unions
from codegen.models import lenient_imports, template_data, validators_config
from codegen.shape import REJECT_KNOWN, ShapeError, shape

RULES = [
    Leniency("AuthCapabilities", "terminal", False, True, False, False),
    Leniency("AuthCapabilities", "_meta", None, True, False, False),
    Leniency("McpServerStdio", "args", [], False, True, False),
    Leniency("ProviderInfo", "supported", [], True, False, True),
]
UNION = OpenUnion("SessionUpdate", "sessionUpdate", ("plan", "tool_call"))


def test_each_field_names_the_validator_of_its_rule() -> None:
    data = template_data(RULES, [UNION])
    assert data["AuthCapabilities"] == {
        "lenient": {"terminal": "lenient_error_false", "meta": "lenient_error_none"}
    }
    assert data["McpServerStdio"] == {"lenient": {"args": "lenient_null_empty_list"}}
    assert data["ProviderInfo"] == {"lenient": {"supported": "lenient_error_items_empty_list"}}
    assert data["SessionUpdate"] == {"union_mode": "left_to_right"}
    assert list(data) == sorted(data)  # stable input, byte-for-byte output


def test_every_named_validator_is_imported_once() -> None:
    imports = lenient_imports(RULES, "acp_v1").split(",")
    assert imports == sorted(set(imports))
    assert imports == [
        "acp_v1._lenient.lenient_error_false",
        "acp_v1._lenient.lenient_error_items_empty_list",
        "acp_v1._lenient.lenient_error_none",
        "acp_v1._lenient.lenient_null_empty_list",
    ]


def test_only_open_unions_keep_a_validator_method() -> None:
    assert validators_config("acp_v1", [UNION]) == {
        "SessionUpdateOther": {
            "validators": [
                {
                    "fields": ["session_update"],
                    "function": "acp_v1._lenient.reject_known_session_update",
                    "mode": "after",
                }
            ]
        }
    }
    assert validators_config("acp_v1", []) == {}


def test_schema_catch_alls_get_the_validator_but_keep_the_smart_union() -> None:
    """A union whose catch-all the schema defines (here embedded in another union too):
    each catch-all model refuses the known tags; the union's own order is the schema's."""
    union = OpenUnion(
        "IdleStateUpdate",
        "stopReason",
        ("end_turn", "refusal"),
        ("IdleStateUpdateOther", "StateUpdateIdleOther"),
    )
    rule = {
        "validators": [
            {
                "fields": ["stop_reason"],
                "function": "acp_v1._lenient.reject_known_idle_state_update",
                "mode": "after",
            }
        ]
    }
    assert validators_config("acp_v1", [union, UNION]) == {
        "IdleStateUpdateOther": rule,
        "SessionUpdateOther": validators_config("acp_v1", [UNION])["SessionUpdateOther"],
        "StateUpdateIdleOther": rule,
    }
    assert list(validators_config("acp_v1", [UNION, union])) == sorted(
        ["IdleStateUpdateOther", "SessionUpdateOther", "StateUpdateIdleOther"]
    )
    assert template_data([], [union, UNION]) == {"SessionUpdate": {"union_mode": "left_to_right"}}


def test_shape_types_a_schema_catch_all_tag_and_ir_finds_its_models() -> None:
    member = {"type": "object", "properties": {"state": {"type": "string", "const": "running"}}}
    other = {
        "title": "other",
        "type": "object",
        "properties": {"state": {"type": "string", "description": "Unrecognized state."}},
        "required": ["state"],
        "not": {"anyOf": [member]},
    }
    schema = {"$defs": {"State": {"anyOf": [member, other]}}}
    shaped = shape(schema)
    catch_all = shaped["$defs"]["State"]["anyOf"][1]
    assert catch_all["title"] == "StateOther"
    assert "not" not in catch_all
    assert catch_all["properties"]["state"] == {
        "type": "string",
        "customTypePath": "acp_v1._open.Unknown",
        "description": "Unrecognized state.",
        REJECT_KNOWN: {"union": "State", "tag": "state", "known": ["running"]},
    }
    assert open_unions(shaped, (), REJECT_KNOWN) == [
        OpenUnion("State", "state", ("running",), ("StateOther",))
    ]
    assert open_unions(shaped, ()) == []


def test_shape_refuses_a_catch_all_whose_tag_is_not_a_plain_string() -> None:
    member = {"type": "object", "properties": {"state": {"type": "string", "const": "running"}}}
    other = {"title": "other", "type": "object", "properties": {"state": {"type": "integer"}}}
    with pytest.raises(ShapeError, match="State: catch-all tag state"):
        shape({"$defs": {"State": {"anyOf": [member, other]}}})
