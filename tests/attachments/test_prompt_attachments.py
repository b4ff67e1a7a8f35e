"""ACP prompt blocks → model content, with real files under tmp_path."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from acp_v1.models import (
    BlobResourceContents,
    ContentBlock,
    ContentBlockAudio,
    ContentBlockImage,
    ContentBlockResource,
    ContentBlockResourceLink,
    ContentBlockText,
    PromptCapabilities,
    TextResourceContents,
)
from acpwire.attachments import (
    IMAGE_PLACEHOLDER,
    MAX_INLINE_BYTES,
    PROMPT_CAPABILITIES,
    PromptContent,
    prompt_to_model_content,
)

# A real 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
NO_IMAGES = "[Image omitted: the model does not accept images]"


def convert(blocks: list[ContentBlock], cwd: Path, *, accepts_images: bool = True) -> PromptContent:
    return prompt_to_model_content(blocks, cwd=str(cwd), accepts_images=accepts_images)


def link(uri: str, name: str = "") -> ContentBlockResourceLink:
    return ContentBlockResourceLink(uri=uri, name=name)


def text_of(result: PromptContent) -> str:
    """All text the model sees, whatever the content shape."""
    if isinstance(result.content, str):
        return result.content
    return "\n".join(str(p["text"]) for p in result.content if p["type"] == "text")


def image_urls(result: PromptContent) -> list[str]:
    if isinstance(result.content, str):
        return []
    parts: list[dict[str, Any]] = result.content
    return [str(p["image_url"]["url"]) for p in parts if p["type"] == "image_url"]


def test_plain_text_stays_a_string(tmp_path: Path) -> None:
    result = convert([ContentBlockText(text="hello"), ContentBlockText(text="world")], tmp_path)
    assert result.content == "hello\nworld"
    assert result.display_text == "hello\nworld"
    assert result.notes == []
    assert not result.is_empty


def test_empty_prompt_is_empty(tmp_path: Path) -> None:
    assert convert([], tmp_path).is_empty
    assert convert([ContentBlockText(text="  \n")], tmp_path).is_empty


def test_text_file_link_is_inlined_with_header(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("print('hi')\n", encoding="utf-8")
    result = convert(
        [ContentBlockText(text="look"), link((tmp_path / "a.py").as_uri(), "a.py")], tmp_path
    )
    assert isinstance(result.content, str)
    assert f"[Attached file: a.py]\nPath: {tmp_path / 'a.py'}\n\nprint('hi')\n" in result.content
    assert result.display_text == "look\n[Attached file: a.py]"
    assert result.notes == []


def test_percent_encoded_uri_with_spaces_and_localhost(tmp_path: Path) -> None:
    target = tmp_path / "my notes" / "to do.txt"
    target.parent.mkdir()
    target.write_text("buy milk", encoding="utf-8")
    uri = target.as_uri()
    assert "%20" in uri
    assert "buy milk" in text_of(convert([link(uri)], tmp_path))
    localhost = "file://localhost" + uri.removeprefix("file://")
    assert "buy milk" in text_of(convert([link(localhost)], tmp_path))


def test_a_selection_fragment_or_a_query_is_not_part_of_the_path(tmp_path: Path) -> None:
    """Editors link a selection as ``file:///...#L10:20``: the file is still read; an
    escaped ``%23`` stays part of a name."""
    target = tmp_path / "x.txt"
    target.write_text("the file", encoding="utf-8")
    for uri in (target.as_uri() + "#L1:3", target.as_uri() + "?line=2", "file:x.txt#L2"):
        assert "the file" in text_of(convert([link(uri)], tmp_path)), uri
    hashed = tmp_path / "a#b.txt"
    hashed.write_text("hash in the name", encoding="utf-8")
    assert "hash in the name" in text_of(convert([link(hashed.as_uri())], tmp_path))


def test_relative_paths_resolve_against_session_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = tmp_path / "session"
    (session / "sub").mkdir(parents=True)
    (session / "sub" / "x.txt").write_text("from session cwd", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "sub").mkdir(parents=True)
    (elsewhere / "sub" / "x.txt").write_text("from process cwd", encoding="utf-8")
    monkeypatch.chdir(elsewhere)
    for uri in ("sub/x.txt", "file:sub/x.txt"):
        body = text_of(convert([link(uri)], session))
        assert "from session cwd" in body
        assert "from process cwd" not in body


def test_large_file_is_truncated_at_cap(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    big.write_bytes(b"x" * (600 * 1024))
    result = convert([link(big.as_uri(), "big.log")], tmp_path)
    header = f"[Attached file: big.log] (truncated to {MAX_INLINE_BYTES} of {600 * 1024} bytes)"
    assert isinstance(result.content, str)
    assert result.content.startswith(header)
    assert result.content.count("x") == MAX_INLINE_BYTES
    assert result.notes == [header]


def test_truncation_does_not_split_a_utf8_character(tmp_path: Path) -> None:
    # 1 + 2*n bytes: the cap falls in the middle of an "é".
    path = tmp_path / "accents.txt"
    path.write_text("a" + "é" * 300_000, encoding="utf-8")
    body = text_of(convert([link(path.as_uri())], tmp_path))
    assert "Ã" not in body  # no latin-1 fallback mojibake
    assert body.endswith("é")
    assert body.count("é") == (MAX_INLINE_BYTES - 1) // 2


def test_binary_file_is_omitted(tmp_path: Path) -> None:
    blob = tmp_path / "payload"
    blob.write_bytes(b"\x89ELF\x00\x01\x02" * 10)
    result = convert([link(blob.as_uri())], tmp_path)
    assert result.content == f"[Binary file omitted: 70 bytes, mime=unknown] (Path: {blob})"
    assert result.notes == [result.content]


def test_declared_binary_mime_that_is_not_utf8_is_omitted(tmp_path: Path) -> None:
    pdf = tmp_path / "doc.pdf"
    pdf.write_bytes(b"%PDF-1.7 \xff\xfe\xfd")
    assert "[Binary file omitted: 12 bytes, mime=application/pdf]" in text_of(
        convert([link(pdf.as_uri())], tmp_path)
    )
    # A declared non-text mime does not hide a file that is really UTF-8 text.
    notes = tmp_path / "notes.dat"
    notes.write_text("plain words", encoding="utf-8")
    block = ContentBlockResourceLink(
        uri=notes.as_uri(), name="notes.dat", mime_type="application/octet-stream"
    )
    assert "plain words" in text_of(convert([block], tmp_path))


def test_latin1_and_bom_text_are_decoded(tmp_path: Path) -> None:
    latin = tmp_path / "old.txt"
    latin.write_bytes("café crème".encode("latin-1"))
    assert "café crème" in text_of(convert([link(latin.as_uri())], tmp_path))
    bom = tmp_path / "bom.txt"
    bom.write_bytes("\ufeffhello".encode())
    body = text_of(convert([link(bom.as_uri())], tmp_path))
    assert body.endswith("\n\nhello")


def test_missing_file_and_directory_become_notes(tmp_path: Path) -> None:
    missing = tmp_path / "gone.txt"
    result = convert([ContentBlockText(text="see"), link(missing.as_uri(), "gone.txt")], tmp_path)
    assert result.notes == [f"[Attached file not found: {missing}] (gone.txt)"]
    assert result.content == "see\n" + result.notes[0]
    result = convert([link(tmp_path.as_uri(), "dir")], tmp_path)
    assert result.notes == [f"[Cannot attach {tmp_path}: not a regular file] (dir)"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_becomes_note(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("x", encoding="utf-8")
    secret.chmod(0)
    result = convert([link(secret.as_uri())], tmp_path)
    assert result.notes and result.notes[0].startswith("[Cannot read attached file")


def test_non_file_uris_are_links_only(tmp_path: Path) -> None:
    result = convert([link("https://example.com/a.txt"), link("zed:///agent/thread/1")], tmp_path)
    assert result.notes == [
        "[Resource link only: https://example.com/a.txt; cannot read non-file URIs directly.]",
        "[Resource link only: zed:///agent/thread/1; cannot read non-file URIs directly.]",
    ]
    assert result.display_text == (
        "[Resource link: https://example.com/a.txt]\n[Resource link: zed:///agent/thread/1]"
    )


def test_file_uri_on_another_host_is_refused(tmp_path: Path) -> None:
    result = convert([link("file://fileserver/share/a.txt")], tmp_path)
    assert result.notes == ["[Cannot read file URI on another host: file://fileserver/share/a.txt]"]


def test_image_block_inlined_or_omitted(tmp_path: Path) -> None:
    block = ContentBlockImage(data=base64.b64encode(PNG).decode(), mime_type="image/png")
    on = convert([ContentBlockText(text="what is this"), block], tmp_path)
    assert isinstance(on.content, list)
    assert on.content[0] == {"type": "text", "text": "what is this"}
    assert image_urls(on) == ["data:image/png;base64," + base64.b64encode(PNG).decode()]
    assert on.display_text == f"what is this\n{IMAGE_PLACEHOLDER}"
    off = convert([block], tmp_path, accepts_images=False)
    assert off.content == NO_IMAGES
    assert off.notes == [NO_IMAGES]
    assert off.display_text == IMAGE_PLACEHOLDER


def test_invalid_base64_image_and_blob(tmp_path: Path) -> None:
    image = convert([ContentBlockImage(data="not base64!!", mime_type="image/png")], tmp_path)
    assert len(image.notes) == 1
    assert image.notes[0].startswith("[Image omitted: invalid base64")
    assert image_urls(image) == []
    blob = BlobResourceContents(uri="file:///x.bin", blob="%%%")
    result = convert([ContentBlockResource(resource=blob)], tmp_path)
    assert result.notes[0].startswith("[Embedded resource omitted: invalid base64")
    assert result.notes[0].endswith(": file:///x.bin]")


def test_image_file_link_inlined_omitted_and_too_large(tmp_path: Path) -> None:
    pic = tmp_path / "pic.png"
    pic.write_bytes(PNG)
    on = convert([link(pic.as_uri(), "pic.png")], tmp_path)
    assert text_of(on) == f"[Attached image: pic.png]\nPath: {pic}"
    assert image_urls(on) == ["data:image/png;base64," + base64.b64encode(PNG).decode()]
    off = convert([link(pic.as_uri(), "pic.png")], tmp_path, accepts_images=False)
    assert off.notes == [f"{NO_IMAGES} (pic.png)"]
    assert image_urls(off) == []
    huge = tmp_path / "huge.jpg"
    huge.write_bytes(b"\xff\xd8" + b"\x00" * (600 * 1024 - 2))
    big = convert([link(huge.as_uri(), "huge.jpg")], tmp_path)
    assert big.notes == [f"[Image too large to inline: {600 * 1024} bytes, cap=524288] (huge.jpg)"]
    assert big.display_text == IMAGE_PLACEHOLDER


def test_svg_is_text_and_exotic_image_formats_are_noted(tmp_path: Path) -> None:
    svg = tmp_path / "logo.svg"
    svg.write_text("<svg></svg>", encoding="utf-8")
    assert "<svg></svg>" in text_of(convert([link(svg.as_uri())], tmp_path))
    tiff = tmp_path / "scan.tiff"
    tiff.write_bytes(b"II*\x00")
    result = convert([link(tiff.as_uri(), "scan.tiff")], tmp_path)
    assert result.notes == [
        "[Image format not supported for inlining: mime=image/tiff, 4 bytes] (scan.tiff)"
    ]


def test_embedded_text_resource_names_uri(tmp_path: Path) -> None:
    resource = TextResourceContents(uri="file:///proj/src/main.rs", text="fn main() {}")
    result = convert([ContentBlockResource(resource=resource)], tmp_path)
    assert result.content == (
        "[Embedded resource: file:///proj/src/main.rs]\nURI: file:///proj/src/main.rs\n\nfn main() {}"
    )
    assert result.display_text == "[Embedded resource: file:///proj/src/main.rs]"


def test_blob_resources_by_mime(tmp_path: Path) -> None:
    image = BlobResourceContents(
        uri="file:///shot.png", blob=base64.b64encode(PNG).decode(), mime_type="image/png"
    )
    text = BlobResourceContents(uri="mem://notes", blob=base64.b64encode(b"hello blob").decode())
    binary = BlobResourceContents(
        uri="mem://raw", blob=base64.b64encode(b"\x00\x01\x02").decode(), mime_type="x/y"
    )
    result = convert([ContentBlockResource(resource=r) for r in (image, text, binary)], tmp_path)
    assert len(image_urls(result)) == 1
    body = text_of(result)
    assert "[Embedded resource: mem://notes]\nURI: mem://notes\n\nhello blob" in body
    assert "[Binary file omitted: 3 bytes, mime=x/y] (URI: mem://raw)" in body
    assert result.display_text.splitlines()[0] == IMAGE_PLACEHOLDER
    off = convert([ContentBlockResource(resource=image)], tmp_path, accepts_images=False)
    assert off.notes == [f"{NO_IMAGES} (file:///shot.png)"]


def test_audio_is_noted_not_sent(tmp_path: Path) -> None:
    audio = ContentBlockAudio(data=base64.b64encode(b"RIFF").decode(), mime_type="audio/wav")
    result = convert([audio], tmp_path)
    assert result.content == "[Audio omitted: audio input is not supported]"
    assert result.display_text == "[Audio attachment]"


def test_non_block_input_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="expected an ACP ContentBlock, got dict"):
        prompt_to_model_content(
            [{"type": "text", "text": "x"}],  # type: ignore[list-item]  # deliberately wrong
            cwd=str(tmp_path),
            accepts_images=True,
        )


def test_prompt_capabilities_are_valid_and_truthful() -> None:
    caps = PromptCapabilities.model_validate(dict(PROMPT_CAPABILITIES))
    assert (caps.image, caps.audio, caps.embedded_context) == (True, False, True)


def test_path_through_a_file_is_an_unreadable_note(tmp_path: Path) -> None:
    # Runs as root too: stat() fails with ENOTDIR, which is not "not found".
    (tmp_path / "plain.txt").write_text("x", encoding="utf-8")
    bad = tmp_path / "plain.txt" / "child.txt"
    result = convert([link(bad.as_uri(), "child.txt")], tmp_path)
    assert result.notes == [f"[Cannot read attached file {bad}: Not a directory] (child.txt)"]
