"""The turn bridge under many producer threads: every delta arrives, each thread's in
its own order, and the event loop is woken far less often than once per delta."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest

from acpwire.server.bridge import TurnBridge

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
    drain = bridge._drain

    def counting_drain() -> None:
        nonlocal wakeups
        wakeups += 1
        drain()

    bridge._drain = counting_drain  # type: ignore[method-assign]

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
    assert wakeups < THREADS * DELTAS  # batched: one wake-up collects many deltas
