"""Model-facing names of MCP tools and the text of MCP tool results."""

from __future__ import annotations

import json

import mcp_types as types

from acpwire.mcp.naming import MAX_LENGTH, allocate_names, is_valid, sanitize
from acpwire.mcp.results import NO_CONTENT, outcome_from_result


def test_names_are_prefixed_and_sanitised() -> None:
    assert allocate_names("git", ["status", "log.show", "diff view"]) == [
        "git__status",
        "git__log_show",
        "git__diff_view",
    ]
    assert allocate_names("my server!", ["ünïcode"]) == ["my_server____n_code"]
    assert sanitize("a.b/c d") == "a_b_c_d"
    assert allocate_names("", [""]) == ["mcp__tool"]


def test_sanitising_collision_gets_a_stable_hash_and_valid_names_keep_theirs() -> None:
    names = allocate_names("s", ["a.b", "a_b"])
    assert names[1] == "s__a_b"  # already valid: keeps the plain name whatever the order
    assert names[0].startswith("s__a_b_") and names[0] != names[1]
    assert allocate_names("s", ["a_b", "a.b"]) == [names[1], names[0]]
    assert allocate_names("s", ["a.b", "a_b"]) == names  # stable across calls
    assert all(is_valid(name) for name in names)


def test_collision_with_a_taken_name() -> None:
    [name] = allocate_names("read", ["file"], taken=["read__file"])
    assert name.startswith("read__file_") and is_valid(name)
    # The same server and tool listed twice still get distinct names.
    first, second = allocate_names("x", ["t", "t"])
    assert first == "x__t" and second != first and is_valid(second)


def test_long_names_are_cut_with_a_distinguishing_hash() -> None:
    long_a, long_b = "t" * 80 + "a", "t" * 80 + "b"
    names = allocate_names("server", [long_a, long_b])
    assert all(len(name) == MAX_LENGTH and is_valid(name) for name in names)
    assert names[0] != names[1]
    assert allocate_names("server", [long_b]) == [names[1]]


def _result(*blocks: types.ContentBlock, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=list(blocks), is_error=error)


def test_text_content_is_joined_and_media_summarised() -> None:
    outcome = outcome_from_result(
        _result(
            types.TextContent(text="first"),
            types.ImageContent(data="AAAA" * 10, mime_type="image/png"),
            types.AudioContent(data="AAAA", mime_type="audio/wav"),
            types.ResourceLink(name="notes", uri="file:///n.txt", mime_type="text/plain"),
            types.EmbeddedResource(
                resource=types.TextResourceContents(uri="file:///a.txt", text="inside")
            ),
            types.EmbeddedResource(
                resource=types.BlobResourceContents(uri="file:///b.bin", blob="AAAAAAAA")
            ),
        )
    )
    assert not outcome.failed
    assert outcome.result_text.split("\n") == [
        "first",
        "[image: image/png, about 30 bytes]",
        "[audio: audio/wav, about 3 bytes]",
        "[resource link: file:///n.txt (notes, text/plain)]",
        "[resource file:///a.txt]",
        "inside",
        "[binary resource file:///b.bin: unknown type, about 6 bytes]",
    ]


def test_error_results_fail_and_empty_results_say_so() -> None:
    failed = outcome_from_result(_result(types.TextContent(text="bad input"), error=True))
    assert failed.failed and json.loads(failed.result_text) == {"error": "bad input"}
    assert outcome_from_result(_result()).result_text == NO_CONTENT
    structured = types.CallToolResult(content=[], structured_content={"n": 1})
    assert json.loads(outcome_from_result(structured).result_text) == {"n": 1}
