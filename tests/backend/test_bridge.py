"""The turn bridge under many producer threads: every delta arrives, each thread's in
its own order, and the event loop is woken far less often than once per delta."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest

from acpwire.agent.seam import EditorRefused
from acpwire.server.turns.bridge import TurnBridge

pytestmark = pytest.mark.anyio

THREADS, DELTAS = 4, 2_000


class Recorder:
    """The loop-side services a text-only turn uses."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.updates: list[Any] = []

    async def send_text(self, text: str, kind: str) -> None:
        self.text.append(text)

    async def send(self, update: Any) -> None:
        self.updates.append(update)

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"a text-only turn called {name}")


async def test_deltas_from_many_threads_all_arrive_in_per_thread_order() -> None:
    services = Recorder()
    bridge = TurnBridge(services, cwd="/tmp", call_timeout=5.0)
    wakeups = 0
    handoff = bridge._handoff
    drain = handoff.drain

    def counting_drain() -> None:
        nonlocal wakeups
        wakeups += 1
        drain()

    handoff.drain = counting_drain  # type: ignore[method-assign]

    def produce(thread: int) -> None:
        for i in range(DELTAS):
            bridge.on_text_delta(f"{thread}:{i};")

    async with anyio.create_task_group() as tg:
        tg.start_soon(bridge.pump)
        workers = [threading.Thread(target=produce, args=(t,)) for t in range(THREADS)]
        for worker in workers:
            worker.start()
        with anyio.fail_after(10):
            while any(worker.is_alive() for worker in workers):
                await anyio.sleep(0.01)
        await bridge.finish()

    pieces = "".join(services.text).split(";")[:-1]
    assert len(pieces) == THREADS * DELTAS
    for thread in range(THREADS):
        mine = [int(p.split(":")[1]) for p in pieces if p.startswith(f"{thread}:")]
        assert mine == list(range(DELTAS))
    assert 0 < wakeups < THREADS * DELTAS  # batched: one wake-up collects many deltas


class SilentEditor(Recorder):
    """An editor that offers fs and never answers (terminals share the same default)."""

    async def read_file(self, path: str) -> str | None:
        await anyio.sleep_forever()
        return None

    async def write_file(self, path: str, content: str) -> bool:
        await anyio.sleep_forever()
        return False


async def test_an_editor_that_never_answers_is_a_refusal_not_a_local_fallback() -> None:
    bridge = TurnBridge(SilentEditor(), cwd="/tmp", call_timeout=0.5)
    outcomes: list[str] = []

    def agent() -> None:
        calls = (
            lambda: bridge.read_text_file("/tmp/x"),
            lambda: bridge.write_text_file("/tmp/x", "y"),
        )
        for call in calls:
            try:
                outcomes.append(f"answered {call()!r}")  # None/False would mean "do it locally"
            except EditorRefused as exc:
                outcomes.append(str(exc))

    async with anyio.create_task_group() as tg:
        tg.start_soon(bridge.pump)
        worker = threading.Thread(target=agent)
        worker.start()
        with anyio.fail_after(60):
            while worker.is_alive():
                await anyio.sleep(0.05)
        await bridge.finish()
    assert [o.split(" the request")[0] for o in outcomes] == ["The editor did not answer"] * 2
    assert all("Do not retry" in o for o in outcomes)
