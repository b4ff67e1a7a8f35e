"""Persistent allow_always / deny_always decisions per workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from acpwire.store import SessionStore


def test_remember_lookup_and_override(store: SessionStore) -> None:
    assert store.lookup_approval("/w", "command", "rm -rf") is None
    store.remember_approval("/w", "command", "rm -rf", "deny")
    assert store.lookup_approval("/w", "command", "rm -rf") == "deny"
    store.remember_approval("/w", "command", "rm -rf", "allow")
    assert store.lookup_approval("/w", "command", "rm -rf") == "allow"
    # Kind and key are part of the identity; matching is exact.
    assert store.lookup_approval("/w", "edit", "rm -rf") is None
    assert store.lookup_approval("/w", "command", "rm -r") is None


def test_workspaces_are_separate_and_normalized(store: SessionStore) -> None:
    store.remember_approval("/mnt/C/proj/", "edit", "src/*.py", "allow")
    assert store.lookup_approval("/mnt/c/proj", "edit", "src/*.py") == "allow"
    assert store.lookup_approval(r"C:\proj", "edit", "src/*.py") == "allow"
    assert store.lookup_approval("/mnt/c/other", "edit", "src/*.py") is None


def test_list_and_revoke(store: SessionStore) -> None:
    store.remember_approval("/w", "edit", "b.txt", "deny")
    store.remember_approval("/w", "command", "git push", "allow")
    store.remember_approval("/w", "edit", "a.txt", "allow")
    store.remember_approval("/other", "edit", "a.txt", "deny")
    listed = store.list_approvals("/w/")
    assert [(a.kind, a.key, a.decision) for a in listed] == [
        ("command", "git push", "allow"),
        ("edit", "a.txt", "allow"),
        ("edit", "b.txt", "deny"),
    ]
    assert all(a.workspace == "/w" for a in listed)
    assert store.revoke_approval("/w", "edit", "a.txt") is True
    assert store.revoke_approval("/w", "edit", "a.txt") is False
    assert store.lookup_approval("/w", "edit", "a.txt") is None
    assert store.lookup_approval("/other", "edit", "a.txt") == "deny"


@pytest.mark.parametrize(
    ("workspace", "kind", "key", "decision", "message"),
    [
        ("/w", "shell", "x", "allow", "approval kind"),
        ("/w", "command", "", "allow", "approval key"),
        ("", "command", "x", "allow", "approval workspace"),
        ("/w", "command", "x", "maybe", "approval decision"),
    ],
)
def test_bad_input(
    store: SessionStore, workspace: str, kind: str, key: str, decision: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        store.remember_approval(workspace, kind, key, decision)  # type: ignore[arg-type]  # invalid on purpose
    assert store.list_approvals("/w") == []


def test_approvals_survive_reopen(db_path: Path) -> None:
    with SessionStore(db_path) as first:
        first.remember_approval("/w", "command", "make deploy", "allow")
    with SessionStore(db_path) as second:
        assert second.lookup_approval("/w", "command", "make deploy") == "allow"
