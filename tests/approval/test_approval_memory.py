"""Session grants in memory and persistent decisions in a real SQLite SessionStore."""

from __future__ import annotations

from pathlib import Path

import pytest

from acpwire.approval import ApprovalMemory, ApprovalStore, command_key
from acpwire.store import SessionStore

WS = "/work/proj"


def test_command_key_is_the_exact_command() -> None:
    """A here-document indented differently is another command (its whitespace is data)."""
    heredoc = "cat > run.sh <<EOF\n  rm -rf build\nEOF"
    assert command_key(heredoc) == heredoc
    assert command_key(heredoc) != command_key(heredoc.replace("  rm", " rm"))
    assert command_key("rm   -rf ./build") != command_key("rm -rf ./build")
    assert command_key("git push\r\n") == "git push\r\n"
    with pytest.raises(ValueError, match="must not be empty"):
        command_key(" \t ")


def test_session_grants_are_per_session() -> None:
    first, second = ApprovalMemory(), ApprovalMemory()
    assert first.check_command(WS, "rm -rf build") is None
    assert first.record(WS, "rm -rf build", "session") == "session"
    assert first.check_command(WS, "rm -rf build") == "allow"
    assert first.check_command(WS, "rm -rf   build") is None
    assert second.check_command(WS, "rm -rf build") is None
    assert first.check_command(WS, "rm -rf /") is None
    first.record_edit("session")
    # The grant covers workspace edits only: it never widens to edits anywhere.
    assert first.edit_policy("ask") == "workspace"
    assert first.edit_policy("session") == "session"
    assert second.edit_policy("ask") == "ask"
    assert not second.edits_allowed_for_session
    first.clear_session()
    assert first.check_command(WS, "rm -rf build") is None
    assert first.edit_policy("workspace") == "workspace"


@pytest.mark.parametrize("decision", ["once", "deny", "timeout", "cancelled", "invalid"])
def test_one_off_answers_are_not_remembered(tmp_path: Path, decision: str) -> None:
    with SessionStore(tmp_path / "s.db") as store:
        memory = ApprovalMemory(store)
        assert memory.record(WS, "make clean", decision) == "none"  # type: ignore[arg-type]  # parametrized Literal
        assert memory.record_edit(decision) == "none"  # type: ignore[arg-type]  # parametrized Literal
        assert memory.check_command(WS, "make clean") is None
        assert memory.list_persistent(WS) == []
        assert not memory.edits_allowed_for_session


def test_persistent_decisions_survive_a_reopen(tmp_path: Path) -> None:
    db = tmp_path / "home" / "sessions.db"
    with SessionStore(db) as store:
        typed: ApprovalStore = store  # the real store satisfies the Protocol
        memory = ApprovalMemory(typed)
        assert memory.record(WS, "git push --force", "always") == "persistent"
        assert memory.record(WS, "curl x | sh", "deny_always") == "persistent"
        store.remember_approval(WS, "edit", "src/a.py", "allow")  # another kind: not listed
    with SessionStore(db) as reopened:
        other_session = ApprovalMemory(reopened)
        assert other_session.check_command(WS, "git push --force") == "allow"
        assert other_session.check_command(WS + "/", "curl x | sh") == "deny"
        assert other_session.check_command("/work/other", "git push --force") is None
        assert [(p.key, p.decision) for p in other_session.list_persistent(WS)] == [
            ("curl x | sh", "deny"),
            ("git push --force", "allow"),
        ]
        assert other_session.revoke(WS, "git   push --force") is False  # exact keys
        assert other_session.revoke(WS, "git push --force") is True
        assert other_session.check_command(WS, "git push --force") is None
        assert other_session.revoke(WS, "git push --force") is False
        assert reopened.lookup_approval(WS, "edit", "src/a.py") == "allow"


def test_persistent_deny_beats_a_session_grant(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.db") as store:
        memory = ApprovalMemory(store)
        memory.record(WS, "docker system prune", "session")
        ApprovalMemory(store).record(WS, "docker system prune", "deny_always")
        assert memory.check_command(WS, "docker system prune") == "deny"
        assert memory.revoke(WS, "docker system prune") is True
        assert memory.check_command(WS, "docker system prune") is None


def test_without_or_with_a_failing_store_always_is_kept_for_the_session(tmp_path: Path) -> None:
    memory = ApprovalMemory()
    assert memory.record(WS, "rm -rf dist", "always") == "session"
    assert memory.record(WS, "shutdown now", "deny_always") == "session"
    assert memory.check_command(WS, "rm -rf dist") == "allow"
    assert memory.check_command(WS, "shutdown now") == "deny"
    assert memory.list_persistent(WS) == []

    store = SessionStore(tmp_path / "closed.db")
    store.close()  # every call now raises StoreError: a real failing store
    broken = ApprovalMemory(store)
    assert broken.check_command(WS, "rm -rf dist") is None  # lookup failure: ask
    assert broken.record(WS, "rm -rf dist", "always") == "session"
    assert broken.check_command(WS, "rm -rf dist") == "allow"
    assert ApprovalMemory(store).check_command(WS, "rm -rf dist") is None
