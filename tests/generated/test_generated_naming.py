"""Generated class names: never numbered, and union variants named after union + tag."""

from __future__ import annotations

import ast
import re
import typing

import pytest

from acp_v1 import Unknown, models as m
from acp_v1._base import AcpModel
from tests.generated.schema_facts import GENERATED_DIR, defs, enum_values, pascal, union_tags

NUMBERED = re.compile(r"\w+\d+")


def _defined_names(tree: ast.Module) -> list[tuple[str, int]]:
    """Every class (at any depth) and every module-level assigned name, with its line."""
    found = [(node.name, node.lineno) for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    for node in tree.body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        found += [(t.id, node.lineno) for t in targets if isinstance(t, ast.Name)]
    return found


def test_generated_package_has_modules() -> None:
    names = {p.relative_to(GENERATED_DIR).as_posix() for p in GENERATED_DIR.rglob("*.py")}
    assert {"methods.py", "interfaces.py", "peers.py", "_lazy.py"} <= names
    for package in ("models", "dispatch"):
        assert f"{package}/__init__.py" in names
        assert f"{package}/connection.py" in names, "the initialize group has its own module"


def test_no_numbered_names_in_generated_code() -> None:
    offenders: list[str] = []
    classes = 0
    for path in sorted(GENERATED_DIR.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        classes += sum(isinstance(node, ast.ClassDef) for node in ast.walk(tree))
        for name, line in _defined_names(tree):
            if NUMBERED.fullmatch(name):
                offenders.append(f"{path.name}:{line}: {name}")
    assert classes > 250, "the generated modules look truncated"
    assert offenders == [], "numbered generated names:\n" + "\n".join(offenders)


def test_numbered_name_detector_flags_a_numbered_class() -> None:
    tree = ast.parse("class ContentBlock1(Base):\n    pass\nTool2 = int\nclass Fine(Base): ...\n")
    flagged = [n for n, _ in _defined_names(tree) if NUMBERED.fullmatch(n)]
    assert flagged == ["ContentBlock1", "Tool2"]


@pytest.mark.parametrize(
    ("union", "tag_field"),
    [
        ("SessionUpdate", "session_update"),
        ("ContentBlock", "type"),
        ("ToolCallContent", "type"),
        ("RequestPermissionOutcome", "outcome"),
        ("SessionConfigOption", "type"),
        ("PlanUpdateContent", "type"),
    ],
)
def test_each_variant_is_a_class_named_union_plus_tag(union: str, tag_field: str) -> None:
    tags = union_tags(union)
    assert tags, union
    for tag in tags:
        name = union + pascal(tag)
        cls = getattr(m, name, None)
        assert isinstance(cls, type), f"{union} variant {tag!r}: no class {name}"
        assert issubclass(cls, AcpModel)
        field = cls.model_fields[tag_field]
        assert field.default == tag, f"{name}.{tag_field} defaults to {field.default!r}"
        assert typing.get_args(field.annotation) == (tag,), (
            f"{name}.{tag_field} is not Literal[{tag!r}]"
        )


def test_known_session_update_lists_exactly_the_schema_variants() -> None:
    known = typing.get_args(m.KnownSessionUpdate.__value__)[0]
    members = {cls.__name__ for cls in typing.get_args(known)}
    expected = {"SessionUpdate" + pascal(tag) for tag in union_tags("SessionUpdate")}
    assert members == expected
    assert len(expected) == len(union_tags("SessionUpdate")) == 19


def test_session_update_is_known_variants_then_catch_all() -> None:
    known, other = typing.get_args(typing.get_args(m.SessionUpdate.__value__)[0])
    assert known is m.KnownSessionUpdate
    assert other is m.SessionUpdateOther
    assert m.SessionUpdateOther.model_config.get("extra") == "allow"


def test_stable_variants_are_a_subset_of_the_unstable_ones() -> None:
    for union in ("SessionUpdate", "ContentBlock", "ToolCallContent", "McpServer"):
        assert set(union_tags(union, unstable=False)) <= set(union_tags(union)), union


def test_mcp_server_variants_are_named_after_the_union() -> None:
    union_members = {cls.__name__ for cls in typing.get_args(m.McpServer.__value__)}
    assert union_members == {"McpServer" + pascal(tag) for tag in union_tags("McpServer")}


@pytest.mark.parametrize(
    "enum",
    ["ToolKind", "ToolCallStatus", "StopReason", "PlanEntryPriority", "PermissionOptionKind"],
)
def test_open_enums_are_known_literal_or_unknown(enum: str) -> None:
    known, base = typing.get_args(getattr(m, enum).__value__)
    assert known is getattr(m, "Known" + enum)
    assert base is Unknown
    values = enum_values(enum)
    assert values
    assert list(typing.get_args(known.__value__)) == values


def _schema_catch_alls() -> list[tuple[str, str]]:
    """(union, tag property) of every catch-all the schema defines: a ``title: other``
    member whose tag is a plain string where its siblings have constants."""
    found: list[tuple[str, str]] = []
    for union, definition in defs().items():
        members = definition.get("oneOf") or definition.get("anyOf") or []
        for member in members:
            if member.get("title") != "other" or member.get("type") != "object":
                continue
            tags = {
                name
                for sibling in members
                for name, prop in sibling.get("properties", {}).items()
                if "const" in prop
            }
            (tag,) = tags
            prop = member["properties"][tag]
            assert prop.get("type") == "string" and "const" not in prop, (union, prop)
            found.append((union, tag))
    return sorted(found)


def _classes(name: str) -> list[type[AcpModel]]:
    """A generated class, or the classes of a generated union alias."""
    value = getattr(m, name)
    if isinstance(value, type):
        return [value]
    return list(typing.get_args(value.__value__))


def test_the_schema_defines_the_expected_catch_alls() -> None:
    assert _schema_catch_alls() == [
        ("CreateElicitationRequest", "mode"),
        ("CreateElicitationResponse", "action"),
        ("ElicitationPropertySchema", "type"),
        ("IdleStateUpdate", "stopReason"),
        ("MultiSelectItems", "type"),
        ("StateUpdate", "state"),
    ]


@pytest.mark.parametrize(("union", "tag"), _schema_catch_alls())
def test_schema_catch_alls_have_an_unknown_tag(union: str, tag: str) -> None:
    """Like ``SessionUpdateOther``: comparing the tag with a known value narrows the
    union for mypy, because ``Unknown`` never equals one."""
    field = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", tag).lower()
    for cls in _classes(union + "Other"):
        assert cls.model_config.get("extra") == "allow", cls
        assert cls.model_fields[field].annotation is Unknown, cls
        assert cls.model_fields[field].is_required(), cls
        assert cls.__doc__, cls


def test_embedded_idle_catch_all_has_an_unknown_stop_reason() -> None:
    assert m.StateUpdateIdleOther.model_fields["stop_reason"].annotation is Unknown
    assert typing.get_args(m.StateUpdateIdleOther.model_fields["state"].annotation) == ("idle",)
