"""Part D: what ``acpwire tap`` costs, the same agent launched directly and behind it.

* Per message, waiting: ``session/new`` round trips one at a time, directly and behind the
  tap (checking on): what a message waits for the tap.
* Per message, streaming: the minimal acpwire agent (``bench/agents/wire_agent.py``) streams 10,000
  ``agent_message_chunk`` updates in one prompt to the bench's client, launched directly
  and as ``acpwire tap --trace FILE -- <agent>`` (checking on, the default, and with
  ``--no-check``); the tap's cost is the difference per message. Target (issue #26): at
  most 50 µs per message.
* A streamed turn: the whole backend's 5,000-token reply (part B's scenario), launched
  directly and behind the tap. Target: at most 1.05x.

Sides alternate run by run; each side's first run is a warm-up.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from . import scenarios
from .backends import acpwire_argv
from .client import Launch, child_env, spawn
from .results import REPO, Row, at_most, median, under
from .scenarios import Backend
from .stdio import WIRE_AGENT, alternate, wire_round_trip

log = logging.getLogger(__name__)

SECTION = "D. acpwire tap: the same agent directly and behind the tap"
WARM_UP = 100


def tapped(argv: list[str], trace: Path, *options: str) -> list[str]:
    """``argv`` behind the tap, tracing to ``trace``."""
    return [*acpwire_argv(), "tap", "--quiet", "--trace", str(trace), *options, "--", *argv]


async def _round_trips(argv: list[str], n: int, log_path: Path) -> float:
    """Seconds per message of ``n`` request-answer round trips (``session/new``), one at
    a time: what a message waits, as opposed to what a stream's throughput is."""
    async with spawn(argv, env=child_env({}), log_path=log_path) as agent:
        await agent.initialize()
        for _ in range(WARM_UP):
            await agent.new_session(REPO)
        start = time.perf_counter()
        for _ in range(n):
            await agent.new_session(REPO)
        return (time.perf_counter() - start) / (2 * n)


async def run(workdir: Path, mine: Backend, *, n: int, runs: int, long_runs: int) -> list[Row]:
    logs = workdir / "logs"
    traces = workdir / "tap-traces"
    traces.mkdir(parents=True, exist_ok=True)
    agent = list(WIRE_AGENT)
    log.info("tap: %d chunks, direct / tapped / tapped --no-check, %d runs each", n, runs)
    direct, checked, plain = await alternate(
        [
            lambda: wire_round_trip(n, logs, [], agent),
            lambda: wire_round_trip(n, logs, [], tapped(agent, traces / "checked.jsonl")),
            lambda: wire_round_trip(
                n, logs, [], tapped(agent, traces / "plain.jsonl", "--no-check")
            ),
        ],
        runs,
    )
    trips = max(100, n // 10)
    log.info("tap: %d round trips, direct / tapped, %d runs each", trips, runs)
    waits = await alternate(
        [
            lambda: _round_trips(agent, trips, logs / "tap-direct.log"),
            lambda: _round_trips(tapped(agent, traces / "trips.jsonl"), trips, logs / "tap.log"),
        ],
        runs,
    )
    waited = [[w * 1e6 for w in side] for side in waits]
    per = 1e6 / n
    added = (median(checked) - median(direct)) * per
    added_plain = (median(plain) - median(direct)) * per
    behind = Backend(
        "acpwire-tapped",
        Launch(tapped(mine.launch.argv, traces / "backend.jsonl"), mine.launch.env),
        logs / "acpwire-tapped.log",
        mine.workspace,
    )
    log.info("tap: the backend's %d-token reply, direct / tapped", scenarios.LONG_TOKENS)
    longs: list[list[float]] = [[], []]
    for _ in range(long_runs):
        for side, backend in zip(longs, (mine, behind), strict=True):
            side += [s.wall for s in await scenarios.long_reply(backend, 1)]
    return [
        Row(
            SECTION,
            f"Added wait per message, {trips:,} request-answer round trips one at a time",
            "µs/msg",
            None,
            median(waited[1]) - median(waited[0]),
            under(50, "µs/msg"),
            f"through the tap (checked) minus directly, per message (a round trip is two):"
            f" {median(waited[1]):.1f} - {median(waited[0]):.1f} µs; min-max direct"
            f" {min(waited[0]):.1f}-{max(waited[0]):.1f}, tapped {min(waited[1]):.1f}-"
            f"{max(waited[1]):.1f}; median of {runs}",
            {"direct": waited[0], "tapped": waited[1]},
        ),
        Row(
            SECTION,
            f"Added per message, {n:,} chunks streamed in one prompt (checked)",
            "µs/msg",
            None,
            added,
            under(50, "µs/msg"),
            f"through the tap minus directly: {median(checked) * per:.1f} - "
            f"{median(direct) * per:.1f} µs/msg; with --no-check {added_plain:.1f} µs/msg "
            f"added; min-max per message direct {min(direct) * per:.1f}-{max(direct) * per:.1f},"
            f" checked {min(checked) * per:.1f}-{max(checked) * per:.1f}; median of {runs}",
            {"direct": direct, "checked": checked, "no_check": plain},
        ),
        Row(
            SECTION,
            f"The backend's {scenarios.LONG_TOKENS:,}-token streamed reply, behind the tap",
            "s",
            median(longs[0]),
            median(longs[1]),
            at_most(1.05),
            f"anchor: the same backend launched directly; prompt to answer, fresh session;"
            f" median of {long_runs}, sides alternating; min-max direct {min(longs[0]):.3f}-"
            f"{max(longs[0]):.3f} s, tapped {min(longs[1]):.3f}-{max(longs[1]):.3f} s",
            {"anchor": longs[0], "ours": longs[1]},
        ),
    ]
