"""Part A, across processes: the stdio round trip, cold start and import time.

* Round trip: an agent process streams N chunks in one prompt to a client process
  (the bench). SDK agent → SDK client against acpwire agent → acpwire client; each run
  spawns a fresh pair, warms it with a short prompt, then times the N-chunk prompt until
  both the answer and every chunk have been handled (the SDK's client handles updates in
  tasks that the answer can overtake). Median of the runs, sides alternating.
* Cold start: spawn to the ``initialize`` answer, fresh process each time, median.
* Import: ``python -X importtime``, summing the top-level modules the statement imported.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
from acp import spawn_agent_process, text_block

from .client import Launch, child_env, peak_rss_mb, spawn
from .results import REPO, Row, median, under

log = logging.getLogger(__name__)

SECTION = "A. Wire layer vs agent-client-protocol 0.12.1 (across processes)"
AGENTS = REPO / "bench" / "agents"
SDK_AGENT = [sys.executable, str(AGENTS / "sdk_agent.py")]
WIRE_AGENT = [sys.executable, str(AGENTS / "wire_agent.py")]
WARM_UP = 100


class _SdkCounter:
    """An SDK client that counts chunks and signals when the expected number arrived."""

    def __init__(self) -> None:
        self.count = 0
        self.expected = 0
        self.done = anyio.Event()

    def expect(self, count: int) -> None:
        self.count, self.expected, self.done = 0, count, anyio.Event()

    async def session_update(self, session_id: str, update: object, **kwargs: Any) -> None:
        self.count += 1
        if self.count >= self.expected:
            self.done.set()


async def _sdk_round_trip(n: int, log_dir: Path, peaks: list[float]) -> float:
    counter = _SdkCounter()
    with (log_dir / "sdk-agent.log").open("ab") as stderr:
        async with (
            spawn_agent_process(
                lambda _agent: counter,  # type: ignore[arg-type,return-value]  # duck-typed client
                SDK_AGENT[0],
                *SDK_AGENT[1:],
                env=child_env({}),
                cwd=REPO,
                transport_kwargs={"stderr": stderr},
            ) as (conn, process)
        ):
            await conn.initialize(protocol_version=1)
            session = (await conn.new_session(cwd=str(REPO), mcp_servers=[])).session_id
            elapsed = 0.0
            for count in (WARM_UP, n):
                counter.expect(count)
                start = time.perf_counter()
                answer = await conn.prompt(session_id=session, prompt=[text_block(str(count))])
                await counter.done.wait()
                elapsed = time.perf_counter() - start
                if answer.stop_reason != "end_turn" or counter.count != count:
                    raise RuntimeError(f"SDK round trip: {counter.count}/{count} chunks")
            peaks.append(peak_rss_mb(process.pid))
            return elapsed


async def wire_round_trip(
    n: int, log_dir: Path, peaks: list[float], argv: Sequence[str] = WIRE_AGENT
) -> float:
    """Seconds of the ``n``-chunk prompt of ``argv`` (the minimal acpwire agent, or that
    agent behind something: part D's tap), after a warm-up prompt."""
    log_path = log_dir / f"{Path(argv[0]).name}-agent.log"
    async with spawn(argv, env=child_env({}), log_path=log_path) as agent:
        await agent.initialize()
        session = await agent.new_session(REPO)
        elapsed = 0.0
        for count in (WARM_UP, n):
            agent.client.forget(session)
            start = time.perf_counter()
            answer = await agent.prompt(session, str(count))
            elapsed = time.perf_counter() - start
            got = len(agent.client.chunks[session])
            if answer.stop_reason != "end_turn" or got != count:
                raise RuntimeError(f"acpwire round trip: {got}/{count} chunks")
        peaks.append(agent.peak_rss_mb())
        return elapsed


async def cold_start(argv: list[str], env: Mapping[str, str], log_path: Path) -> float:
    """Seconds from spawning ``argv`` to its ``initialize`` answer."""
    async with spawn(argv, env=env, log_path=log_path) as agent:
        await agent.initialize()
        return time.perf_counter() - agent.started


async def alternate(
    sides: Sequence[Callable[[], Awaitable[float]]], runs: int, *, warm_up: bool = True
) -> list[list[float]]:
    """Run each side ``runs`` times, taking turns; the samples per side.

    With ``warm_up``, each side first runs once unmeasured (bytecode caches, config
    homes and page cache then start out the same for both).
    """
    if warm_up:
        for side in sides:
            await side()
    samples: list[list[float]] = [[] for _ in sides]
    for _ in range(runs):
        for side, into in zip(sides, samples, strict=True):
            into.append(await side())
    return samples


def all_bindings_statement() -> str:
    """An import statement loading every generated model and envelope module (the
    packages themselves load them lazily)."""
    generated = REPO / "generated" / "acp_v1"
    modules = [
        f"acp_v1.{package}.{path.stem}"
        for package in ("models", "dispatch")
        for path in sorted((generated / package).glob("*.py"))
        if path.stem != "__init__"
    ]
    return "import " + ", ".join(modules)


def import_times(statements: Sequence[str], runs: int) -> list[list[float]]:
    """Seconds each statement spends importing, per ``-X importtime``, runs taken in turn."""
    baseline = set(_importtime("pass"))
    results: list[list[float]] = [[] for _ in statements]
    for _ in range(runs):
        for statement, into in zip(statements, results, strict=True):
            times = _importtime(statement)
            into.append(sum(us for name, us in times.items() if name not in baseline) / 1e6)
    return results


def _importtime(statement: str) -> dict[str, int]:
    """Top-level module → cumulative microseconds, from one fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", statement],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=child_env({}),
        check=True,
    )
    top: dict[str, int] = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _self, cumulative, name = line.removeprefix("import time:").split("|")
        if not name.startswith("  "):  # nested imports are indented further
            top[name.strip()] = int(cumulative)
    return top


async def run(
    log_dir: Path, *, backend: Launch | None = None, n: int = 10_000, runs: int = 5
) -> list[Row]:
    """Part A's cross-process rows; ``backend`` adds the full backend's cold start."""
    log.info("stdio: round trip of %d chunks, %d runs per side", n, runs)
    sdk_peaks: list[float] = []
    wire_peaks: list[float] = []
    sdk, wire = await alternate(
        [
            lambda: _sdk_round_trip(n, log_dir, sdk_peaks),
            lambda: wire_round_trip(n, log_dir, wire_peaks),
        ],
        runs,
    )
    log.info("stdio: cold start, %d runs per side", runs)
    starters = [
        lambda: cold_start(SDK_AGENT, child_env({}), log_dir / "sdk-agent.log"),
        lambda: cold_start(WIRE_AGENT, child_env({}), log_dir / "wire-agent.log"),
    ]
    if backend is not None:
        starters.append(lambda: cold_start(backend.argv, backend.env, log_dir / "acpwire.log"))
    sdk_cold, wire_cold, *backend_cold = await alternate(starters, runs)
    log.info("stdio: import time, %d runs per side", runs)
    sdk_import, ours_import, link_import = import_times(
        ["import acp", all_bindings_statement(), "from acpwire.link import ClientConnection"], runs
    )
    ms = 1e3
    rows = [
        Row(
            SECTION,
            f"Full stdio round trip, {n:,} chunks in one prompt (per message)",
            "µs/msg",
            median(sdk) / n * 1e6,
            median(wire) / n * 1e6,
            None,
            "agent process → client process; prompt sent → answer and every chunk handled",
            {"anchor": sdk, "ours": wire},
        ),
        Row(
            SECTION,
            "Memory: peak RSS of the minimal agent after the round trip",
            "MB",
            median(sdk_peaks),
            median(wire_peaks),
            None,
            "the agent process's VmHWM once every chunk of the timed prompt was handled",
            {"anchor": sdk_peaks, "ours": wire_peaks},
        ),
        Row(
            SECTION,
            "Cold start to the initialize answer: minimal agent",
            "ms",
            median(sdk_cold) * ms,
            median(wire_cold) * ms,
            None,
            "SDK example-style agent vs the same agent on acpwire",
            {"anchor": sdk_cold, "ours": wire_cold},
        ),
    ]
    if backend_cold:
        rows.append(
            Row(
                SECTION,
                "Cold start to the initialize answer: full backend `acpwire`",
                "ms",
                median(sdk_cold) * ms,
                median(backend_cold[0]) * ms,
                None,
                "vs the SDK's minimal agent (which has no sessions, store or model client)",
                {"anchor": sdk_cold, "ours": backend_cold[0]},
            )
        )
    rows += [
        Row(
            SECTION,
            "Import: `import acp` vs every module of `acp_v1.models` and `acp_v1.dispatch`",
            "ms",
            median(sdk_import) * ms,
            median(ours_import) * ms,
            under(250, "ms"),
            "-X importtime, top-level modules the statement imported; all ~340 models and "
            "every envelope (a process loads them by need: initialize needs one module)",
            {"anchor": sdk_import, "ours": ours_import},
        ),
        Row(
            SECTION,
            "Import: `import acp` vs `from acpwire.link import ClientConnection` (runtime + generated)",
            "ms",
            median(sdk_import) * ms,
            median(link_import) * ms,
            None,
            "everything a typed ACP connection needs",
            {"anchor": sdk_import, "ours": link_import},
        ),
    ]
    return rows
