"""Reading and decoding attachments: MIME guesses, base64, ``file:`` URIs and capped file reads.

Every failure is an :class:`AttachError` whose message is the bracketed note the model and
the user see instead of the attachment; nothing here decides how content is assembled.
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
import posixpath
import re
import stat
from pathlib import Path
from urllib.parse import unquote

from acp_v1 import models as m
from acpwire.config.paths import resolve_in_cwd, translate_cwd

_SUFFIX_MIMES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
    ".svg": "image/svg+xml",
}
_TEXT_APPLICATION = re.compile(
    r"^application/(?:json|xml|javascript|ecmascript|x-sh|x-shellscript|x-python|x-yaml|yaml"
    r"|toml|x-toml|sql|graphql|x-httpd-php|x-tex|x-latex|rtf|x-ndjson|[\w.+-]+\+(?:json|xml))$"
)
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):")  # two letters or more: "C:" is a drive


class AttachError(Exception):
    """An attachment that cannot be used; the message is the note to show."""


def _scheme(uri: str) -> str | None:
    match = _SCHEME.match(uri)
    return match.group(1).lower() if match else None


def mime_for(name: str, declared: str | None) -> str | None:
    """The declared MIME type without parameters, else a guess from the name's suffix."""
    if declared:
        return declared.split(";", 1)[0].strip().lower() or None
    suffix = posixpath.splitext(name.lower())[1]
    return _SUFFIX_MIMES.get(suffix) or mimetypes.guess_type("x" + suffix)[0]


def is_image(mime: str | None) -> bool:
    """True for raster images (SVG is text and is read as such)."""
    return mime is not None and mime.startswith("image/") and mime != "image/svg+xml"


def is_text_mime(mime: str) -> bool:
    """True for MIME types whose content is text."""
    return (
        mime.startswith("text/") or mime == "image/svg+xml" or bool(_TEXT_APPLICATION.match(mime))
    )


def decode_utf8(data: bytes, truncated: bool) -> str | None:
    """The text of UTF-8 bytes (a BOM dropped), or None if they are not UTF-8."""
    # A cut at the cap may split a multi-byte character: drop up to three trailing bytes.
    for trim in range(4 if truncated else 1):
        try:
            return data[: len(data) - trim].decode("utf-8-sig")
        except UnicodeDecodeError:
            continue
    return None


def b64decode(data: str) -> bytes:
    """Decode base64, tolerating a ``data:`` URL prefix and line breaks; raise AttachError."""
    if data.startswith("data:") and ";base64," in data:
        data = data.split(";base64,", 1)[1]
    try:
        return base64.b64decode(re.sub(r"\s+", "", data), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise AttachError(f"invalid base64 ({exc})") from exc


def display_name(link: m.ContentBlockResourceLink) -> str:
    """How a resource link is named to the model and in the history."""
    if link.title and link.name and link.title != link.name:
        return f"{link.title} ({link.name})"
    return link.title or link.name or posixpath.basename(unquote(link.uri).rstrip("/")) or link.uri


def local_path(uri: str, cwd: str) -> Path | None:
    """The file a link names, or None for a non-file URI; raise AttachError when unusable."""
    scheme = _scheme(uri)
    if scheme is not None and scheme != "file":
        return None
    target = uri
    if scheme == "file" and translate_cwd(uri).lower().startswith("file:"):
        if uri[5:6] == "/":  # file://host/... with a host that is not this machine
            raise AttachError(f"[Cannot read file URI on another host: {uri}]")
        # A relative "file:notes.txt", without a query or fragment (#L10 of a selection).
        target = unquote(uri[5:].split("#", 1)[0].split("?", 1)[0])
    try:
        return resolve_in_cwd(target, cwd)
    except ValueError as exc:
        raise AttachError(f"[Cannot resolve attached path {uri}: {exc}]") from exc


def file_size(path: Path) -> int:
    """The size of a regular file; raise AttachError for a missing or special file."""
    try:
        info = path.stat()
    except FileNotFoundError as exc:
        raise AttachError(f"[Attached file not found: {path}]") from exc
    except OSError as exc:
        raise AttachError(f"[Cannot read attached file {path}: {exc.strerror or exc}]") from exc
    if not stat.S_ISREG(info.st_mode):
        raise AttachError(f"[Cannot attach {path}: not a regular file]")
    return info.st_size


def read_capped(path: Path, cap: int) -> tuple[bytes, int]:
    """Up to ``cap + 1`` bytes of the file and its total size (at least what was read)."""
    size = file_size(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(cap + 1)
    except OSError as exc:
        raise AttachError(f"[Cannot read attached file {path}: {exc.strerror or exc}]") from exc
    return data, max(size, len(data))
