"""What a lenient receiver had to repair in a message: the values the schema's
``x-deserialize-*`` rules replaced by their default or dropped from a list.

The checker validates as acpwire's decoder reads (``context=DECODE``), so a capability of
the wrong type or an auth method without a name passes it: a receiver on these bindings
survives them. A conformance run asks more of the agent's answers to ``initialize`` and
session set-up (capabilities, auth methods, modes, config options, listed sessions well
formed), so it decodes them with the same generated models and compares what was read
with what was sent: a value read as something else was not valid there. ``null`` where
the schema reads ``null`` as empty is not reported (that is the rule's purpose).
"""

from __future__ import annotations

import functools
import json
from typing import Any, Final

from pydantic import BaseModel, TypeAdapter, ValidationError

from acp_v1 import DECODE

__all__ = ["repairs"]

_KEPT: Final = 3


@functools.cache
def _adapter(type_name: str) -> TypeAdapter[Any]:
    from acp_v1 import models

    return TypeAdapter(getattr(models, type_name))


def _show(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _plain(value: object) -> object:
    """The decoded value in its wire form."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if type(value).__name__ == "Unknown" and hasattr(value, "value"):
        return value.value
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def _same(sent: object, read: object) -> bool:
    """The same JSON value: numbers by value (``5`` read as ``5.0`` is not a repair)."""
    numbers = (int, float)
    if isinstance(sent, bool) or isinstance(read, bool):
        return type(sent) is type(read) and sent == read
    if isinstance(sent, numbers) and isinstance(read, numbers):
        return float(sent) == float(read)
    if isinstance(sent, dict) and isinstance(read, dict):
        return sent.keys() == read.keys() and all(_same(sent[k], read[k]) for k in sent)
    if isinstance(sent, list) and isinstance(read, list):
        return len(sent) == len(read) and all(map(_same, sent, read))
    return sent == read


def _walk(decoded: BaseModel, raw: dict[str, Any], where: str, found: list[str]) -> None:
    for name, info in type(decoded).model_fields.items():
        alias = info.alias or name
        if alias not in raw or alias == "_meta" or len(found) >= _KEPT:
            continue
        sent, read = raw[alias], getattr(decoded, name)
        here = f"{where}.{alias}"
        if sent is None:
            continue
        if isinstance(read, BaseModel):
            if isinstance(sent, dict):
                _walk(read, sent, here, found)
            continue
        if isinstance(sent, list) and isinstance(read, list):
            if len(read) < len(sent):
                found.append(
                    f"{here}: {len(sent) - len(read)} of {len(sent)} items do not validate "
                    f"(a lenient receiver drops them), e.g. {_show(_dropped(sent, read))}"
                )
                continue
            for index, (item, kept) in enumerate(zip(sent, read, strict=False)):
                if isinstance(kept, BaseModel) and isinstance(item, dict):
                    _walk(kept, item, f"{here}[{index}]", found)
            continue
        if not _same(sent, _plain(read)):
            found.append(
                f"{here}: {_show(sent)} does not validate (a lenient receiver reads "
                f"{_show(_plain(read))})"
            )


def _dropped(sent: list[Any], read: list[Any]) -> object:
    kept = [json.dumps(_plain(item), sort_keys=True) for item in read]
    for item in sent:
        if json.dumps(item, sort_keys=True) not in kept:
            return item
    return sent[-1]


def repairs(type_name: str, value: object, where: str = "result") -> list[str]:
    """What decoding ``value`` as ``type_name`` (a generated model) repaired, one line
    each (at most three); empty when it validates as sent or does not validate at all
    (the checker reports that)."""
    if not isinstance(value, dict):
        return []
    try:
        decoded = _adapter(type_name).validate_python(value, context=DECODE)
    except ValidationError:
        return []
    if not isinstance(decoded, BaseModel):
        return []
    found: list[str] = []
    _walk(decoded, value, where, found)
    return found
