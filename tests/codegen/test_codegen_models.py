"""What codegen hands datamodel-code-generator besides the schema: the per-model
template data, the extra imports and the validators table."""

from __future__ import annotations

from codegen.ir import Leniency, OpenUnion
from codegen.models import lenient_imports, template_data, validators_config

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
