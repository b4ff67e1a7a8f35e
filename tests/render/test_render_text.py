"""Truncation, fences and lenient JSON helpers."""

from __future__ import annotations

import pytest

from acpwire.render.text import (
    coerce_args,
    fence,
    fenced_within,
    one_line,
    parse_json,
    parse_json_object,
    pretty_json,
    truncate,
)


def test_truncate_keeps_short_text() -> None:
    assert truncate("x" * 5000, 5000) == "x" * 5000


@pytest.mark.parametrize(("length", "limit"), [(5001, 5000), (12_345, 5000), (1300, 1200)])
def test_truncate_keeps_limit_minus_100_and_notes_the_total(length: int, limit: int) -> None:
    text = "a" * length
    out = truncate(text, limit)
    note = f"\n... ({length} chars total, truncated)"
    assert out == "a" * (limit - 100) + note
    assert len(out) <= limit


def test_one_line_collapses_whitespace_and_cuts_with_ellipsis() -> None:
    assert one_line("a\n  b\tc", 80) == "a b c"
    cut = one_line("x" * 100, 80)
    assert cut == "x" * 77 + "..."
    assert len(cut) == 80


@pytest.mark.parametrize(
    ("text", "marks"),
    [("plain", "```"), ("has ``` inside", "````"), ("has ````` five", "``````"), ("`x`", "```")],
)
def test_fence_is_longer_than_any_backtick_run(text: str, marks: str) -> None:
    assert fence(text) == f"{marks}\n{text}\n{marks}"


def test_fence_with_language() -> None:
    assert fence("print(1)", "python") == "```python\nprint(1)\n```"


def test_fenced_within_stays_within_the_limit_and_closed() -> None:
    body = "line ```` with backticks\n" * 1000
    out = fenced_within(body, 5000, header="Read f.py")
    assert len(out) <= 5000
    assert out.startswith("Read f.py\n\n`````\n")
    assert out.endswith("\n`````")
    assert f"({len(body)} chars total, truncated)" in out


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"a": 1}, {"a": 1}),
        ('{"path": "x.py"}', {"path": "x.py"}),
        ("", {}),
        ("   ", {}),
        (None, {}),
        ("not json", {"raw": "not json"}),
        ("[1, 2]", {"raw": "[1, 2]"}),
        ('"a string"', {"raw": '"a string"'}),
        (42, {"raw": 42}),
        ([1, "a"], {"raw": [1, "a"]}),
        (b"bytes", {"raw": "b'bytes'"}),
        ({1, 2}, {"raw": "{1, 2}"}),
    ],
)
def test_coerce_args_always_gives_a_dict(raw: object, expected: dict[str, object]) -> None:
    assert coerce_args(raw) == expected


def test_coerce_args_returns_the_same_dict() -> None:
    args = {"k": "v"}
    assert coerce_args(args) is args


def test_parse_json_tolerates_a_trailing_hint() -> None:
    assert parse_json('{"todos": []}\n\n[Hint: keep the list short]') == {"todos": []}
    assert parse_json("  [1, 2] trailing") == [1, 2]
    assert parse_json("plain text with error in it") is None
    assert parse_json("{broken") is None
    assert parse_json_object("[1]") is None
    assert parse_json_object('{"a": 1}') == {"a": 1}


def test_pretty_json_is_indented_and_capped() -> None:
    assert pretty_json({"a": 1}, 1200) == '{\n  "a": 1\n}'
    big = pretty_json({"k": "v" * 5000}, 1200)
    assert len(big) <= 1200
    assert big.endswith("chars total, truncated)")
    assert pretty_json({"obj": object()}, 1200).startswith('{\n  "obj": "<object object')
