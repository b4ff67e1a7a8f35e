"""Fixtures for the store tests: real SQLite files under tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import pytest

from acpwire.store import SessionRecord, SessionStore


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "home" / "sessions.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[SessionStore]:
    with SessionStore(db_path) as opened:
        yield opened


class SessionFactory(Protocol):
    def __call__(self, session_id: str, cwd: str = ...) -> SessionRecord: ...


@pytest.fixture
def new_session(store: SessionStore) -> SessionFactory:
    """Create a plain session in ``store``."""

    def make(session_id: str, cwd: str = "/work/proj") -> SessionRecord:
        return store.create_session(SessionRecord(id=session_id, cwd=cwd))

    return make
