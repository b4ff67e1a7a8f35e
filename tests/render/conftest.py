"""Fixtures for the render tests: a wire round trip through the generated union."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from pydantic import BaseModel, TypeAdapter

from acp_v1 import models

_SESSION_UPDATE: TypeAdapter[object] = TypeAdapter(models.SessionUpdate)

RoundTrip = Callable[[BaseModel], dict[str, object]]


def _roundtrip(update: BaseModel) -> dict[str, object]:
    """Dump ``update`` as the wire does, check it reads back as the same class, return it."""
    data = update.model_dump(mode="json", by_alias=True, exclude_none=True)
    json.dumps(data)  # really JSON
    back = _SESSION_UPDATE.validate_python(data)
    assert type(back) is type(update)
    assert isinstance(back, BaseModel)
    assert back.model_dump(mode="json", by_alias=True, exclude_none=True) == data
    return data


@pytest.fixture
def roundtrip() -> RoundTrip:
    return _roundtrip
