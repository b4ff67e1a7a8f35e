"""Start-up never waits on the network: a model server that accepts connections and never
answers (Ollama loading a large model) holds up neither ``initialize`` nor the backend.

The configuration names the endpoint but no model, so the first model listed is used:
``GET /models`` must run after the ``initialize`` answer, and the first ``session/new``
waits for it only ``lookup_timeout`` (+ 2 s), then answers -32000 naming the endpoint.
"""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import pytest

from tests.stdio.stdio_support import ACPWIRE, STEP_TIMEOUT, child_env, raw_child
from tests.support.silent_server import SilentServer

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

LOOKUP_TIMEOUT_S = 3
INIT = {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


def _home(tmp_path: Path, base_url: str) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        f'[model]\nbase_url = "{base_url}"\nlookup_timeout = {LOOKUP_TIMEOUT_S}\n',
        encoding="utf-8",
    )
    return home


async def _wait(event: threading.Event) -> bool:
    return await anyio.to_thread.run_sync(event.wait, STEP_TIMEOUT)


async def test_initialize_is_answered_while_the_model_list_is_still_pending(
    tmp_path: Path,
) -> None:
    with SilentServer() as server:
        home = _home(tmp_path, server.base_url)
        async with raw_child(
            ACPWIRE, env=child_env(home), stderr_path=tmp_path / "stderr.log"
        ) as peer:
            with anyio.fail_after(STEP_TIMEOUT):
                answer = await peer.call("initialize", INIT)
            # The look-up had not given up yet: the answer did not wait for it.
            assert not server.gave_up.is_set()
            assert answer["result"]["protocolVersion"] == 1
            # ... and it runs in the background, after the answer.
            assert await _wait(server.requested)
            assert server.requests[0].startswith(b"GET /v1/models")
            assert not server.gave_up.is_set()
            assert await peer.finish() == 0


async def test_session_new_waits_a_bounded_time_and_names_the_endpoint(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with SilentServer() as server:
        home = _home(tmp_path, server.base_url)
        async with raw_child(
            ACPWIRE, env=child_env(home), stderr_path=tmp_path / "stderr.log"
        ) as peer:
            with anyio.fail_after(STEP_TIMEOUT):
                await peer.call("initialize", INIT)
                first = await peer.call("session/new", {"cwd": str(work), "mcpServers": []})
            error = first["error"]
            assert error["code"] == -32000, error
            assert server.base_url in error["message"]
            assert "ACPWIRE_MODEL" in error["message"]
            # The backend keeps serving (the next session/new asks again, or waits again).
            with anyio.fail_after(STEP_TIMEOUT):
                second = await peer.call("session/new", {"cwd": str(work), "mcpServers": []})
            assert second["error"]["code"] == -32000
            assert server.base_url in second["error"]["message"]
            assert await peer.finish() == 0
    assert b"Traceback" not in (tmp_path / "stderr.log").read_bytes()
