"""Session set-up never waits for the model server's model list: the answer carries the
session's own model, and the full picker follows as a ``config_option_update``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_v1 import models as m
from tests.backend.harness import STEP_S, rig

pytestmark = pytest.mark.anyio


def model_choices(config_options: list[Any] | None) -> list[str]:
    """The values the ``model`` select offers."""
    for option in config_options or []:
        data = option.model_dump(by_alias=True)
        if data.get("id") == "model":
            return [choice["value"] for choice in data.get("options") or []]
    raise AssertionError(f"no model option in {config_options!r}")


async def test_a_held_model_list_does_not_hold_up_session_new(tmp_path: Path) -> None:
    async with rig(tmp_path, models=["fake-model", "big-model"], hold_models=True) as r:
        with anyio.fail_after(STEP_S):  # deadlock guard: /models answers nothing yet
            new = await r.peer.session_new(
                m.NewSessionRequest(cwd=str(r.workspace), mcp_servers=[])
            )
        sid = new.session_id
        assert model_choices(new.config_options) == ["fake-model"]
        assert r.editor.of_kind(sid, "config_option_update") == []
        r.llm.models_open.set()
        await r.editor.wait_for(lambda: bool(r.editor.of_kind(sid, "config_option_update")))
        (update,) = r.editor.of_kind(sid, "config_option_update")
        assert model_choices(update.config_options) == ["fake-model", "big-model"]
        # Known now: the next session lists every model in its answer, with no update.
        with anyio.fail_after(STEP_S):
            other = await r.peer.session_new(
                m.NewSessionRequest(cwd=str(r.workspace), mcp_servers=[])
            )
        assert model_choices(other.config_options) == ["fake-model", "big-model"]
        await anyio.sleep(0.05)
        assert r.editor.of_kind(other.session_id, "config_option_update") == []
