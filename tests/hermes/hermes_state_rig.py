"""Helpers for the shared-store tests: run Python in the Hermes virtualenv against a
``HERMES_HOME``, to write sessions as ``hermes-acp`` does and to read ``state.db`` through
Hermes' own ``SessionDB``."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from typing import Any

_PRELUDE = """
import json, sys
from hermes_constants import get_hermes_home
from hermes_state import SessionDB
db = SessionDB(db_path=get_hermes_home() / "state.db")
arg = json.loads(sys.argv[1])
"""

HERMES_ACP_SESSION = """
from acp_adapter.session import SessionManager

class Agent:  # what hermes-acp's persistence reads of its agent
    model = "bench-model"
    provider = "custom"
    base_url = arg["base_url"]
    api_mode = "chat_completions"

manager = SessionManager(agent_factory=Agent, db=db)
state = manager.create_session(cwd=arg["cwd"])
state.history = arg["history"]
manager.save_session(state.session_id)
out = state.session_id
"""
"""Makes a session with hermes-acp's own ``SessionManager`` (its persistence code)."""


def hermes_run(python: str, env: Mapping[str, str], code: str, arg: Any = None) -> Any:
    """Run ``code`` (which sets ``out``) in the Hermes Python with ``db`` open; ``out``."""
    script = _PRELUDE + code + "\nprint(json.dumps(out, default=str))\n"
    done = subprocess.run(
        [python, "-c", script, json.dumps(arg)],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"Hermes script failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def session_row(python: str, env: Mapping[str, str], session_id: str) -> dict[str, Any] | None:
    """The state.db row of a session (``SessionDB.get_session``)."""
    row: dict[str, Any] | None = hermes_run(python, env, "out = db.get_session(arg)", session_id)
    return row


def messages(
    python: str, env: Mapping[str, str], session_id: str, *, inactive: bool = False
) -> list[dict[str, Any]]:
    """A session's messages as Hermes stores them (``SessionDB.get_messages``)."""
    found: list[dict[str, Any]] = hermes_run(
        python,
        env,
        "out = db.get_messages(arg[0], include_inactive=arg[1])",
        [session_id, inactive],
    )
    return found
