"""Part B: the whole backend against ``hermes-acp`` 0.19.0, same loopback model, same client.

One model server process (``python -m bench.model_server``) serves both backends. Each
backend gets its own config home under the run's work directory, initialised by one
unmeasured start, so first-run set-up (Hermes creates ~15 entries in its home) is not
counted as cold start.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from . import hermes_turn, scenarios, startup
from .backends import acpwire_launch, hermes_launch
from .client import Launch
from .results import REPO, Row, at_most, median
from .scenarios import Backend, Sample
from .stdio import alternate

log = logging.getLogger(__name__)

SECTION = "B. Whole backend vs hermes-acp 0.19.0 (same loopback model, same client)"
READY_TIMEOUT = 30.0


@contextmanager
def model_server(workdir: Path) -> Iterator[str]:
    """Run the loopback model server with the scenarios' rules; yields its base URL."""
    script, ready = workdir / "model-script.json", workdir / "model-url.txt"
    rules = [*scenarios.model_rules(), *hermes_turn.model_rules()]
    script.write_text(json.dumps({"rules": rules}), encoding="utf-8")
    ready.unlink(missing_ok=True)
    with (workdir / "model-server.log").open("ab") as stderr:
        process = subprocess.Popen(
            [
                *(sys.executable, "-m", "bench.model_server"),
                *("--script", str(script), "--ready-file", str(ready)),
            ],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=stderr,
            stderr=stderr,
        )
        try:
            deadline = time.monotonic() + READY_TIMEOUT
            while not ready.exists():
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the model server did not start; see {stderr.name}")
                time.sleep(0.02)
            yield ready.read_text(encoding="utf-8").strip()
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def ours(workdir: Path, base_url: str) -> Backend:
    return _backend("acpwire", workdir, acpwire_launch(workdir / "acpwire-home", base_url))


def hermes(workdir: Path, base_url: str) -> Backend:
    return _backend("hermes", workdir, hermes_launch(workdir / "hermes-home", base_url))


def _backend(name: str, workdir: Path, launch: Launch) -> Backend:
    workspace = workdir / f"{name}-workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    return Backend(name, launch, workdir / "logs" / f"{name}.log", workspace)


async def run(
    mine: Backend,
    anchor: Backend | None,
    base_url: str,
    *,
    cold_runs: int = 5,
    start_runs: int = 9,
    long_runs: int = 3,
    sessions: int = 20,
    many_runs: int = 3,
    turns: int = 50,
    load_runs: int = 3,
) -> list[Row]:
    """Part B's rows; without ``anchor`` only acpwire's absolute numbers."""
    pair = [mine] if anchor is None else [mine, anchor]
    workdir = mine.workspace.parent
    starts = await startup.run(SECTION, workdir, base_url, anchor, runs=start_runs)
    log.info("e2e: memory after initialize, %d runs per side", cold_runs)
    idle = await alternate([_memory_after_initialize(b) for b in pair], cold_runs, warm_up=False)
    log.info("e2e: the model server alone, %d runs", long_runs)
    floor_long, floor_many = await scenarios.model_alone(base_url, sessions, long_runs)
    long, many, load, replayed = [], [], [], []
    for backend in pair:
        log.info("e2e: %s: %d-token reply, %d runs", backend.name, scenarios.LONG_TOKENS, long_runs)
        long.append(await scenarios.long_reply(backend, long_runs))
        log.info("e2e: %s: %d sessions at once, %d runs", backend.name, sessions, many_runs)
        many.append(await scenarios.many_sessions(backend, sessions, many_runs))
        log.info("e2e: %s: building a %d-turn session", backend.name, turns)
        session = await scenarios.build_history(backend, turns)
        log.info("e2e: %s: session/load after restart, %d runs", backend.name, load_runs)
        samples, updates = await scenarios.load_history(backend, session, load_runs)
        load.append(samples)
        replayed.append(f"{backend.name} {updates}")

    return [
        *starts,
        _row(
            f"{scenarios.LONG_TOKENS:,}-token streamed reply, prompt to answer",
            long,
            0.1,
            f"one SSE event per token; warm process, fresh session; median of {long_runs}; "
            f"the model server alone streams it in {median(floor_long):.3f} s",
        ),
        _row(
            f"{sessions} sessions streaming at once",
            many,
            0.1,
            f"{scenarios.MANY_TOKENS} tokens each, fresh sessions; first prompt sent → last "
            f"answer and text in; median of {many_runs}; the model server alone streams them "
            f"in {median(floor_many):.3f} s",
        ),
        _row(
            f"`session/load` of a {turns}-turn session after a restart",
            load,
            0.1,
            f"request → answer, first request after `initialize`; updates replayed: "
            f"{', '.join(replayed)}; median of {load_runs}",
        ),
        _memory_row(
            "Memory: peak RSS after `initialize`",
            idle,
            f"fresh process, `VmHWM` once the answer is in; median of {cold_runs}",
        ),
        _memory_row(
            f"Memory: peak RSS after {sessions} sessions streamed",
            [[sample.peak_mb for sample in side] for side in many],
            f"the process of the {sessions}-session row, `VmHWM` after each of its "
            f"{many_runs} runs; median",
        ),
    ]


def _row(name: str, sides: list[list[Sample]], target: float | None, note: str) -> Row:
    """A part B row from acpwire's samples and, when measured, Hermes'."""
    walls = [[s.wall for s in side] for side in sides]
    cpus = [median([s.cpu for s in side]) for side in sides]
    if any(cpus):
        labels = ("acpwire", "Hermes")
        spent = ", ".join(f"{label} {cpu:.2f} s" for label, cpu in zip(labels, cpus, strict=False))
        note += f"; backend CPU in the window: {spent}"
    theirs = walls[1] if len(walls) > 1 else None
    return Row(
        SECTION,
        name,
        "s",
        None if theirs is None else median(theirs),
        median(walls[0]),
        None if target is None else at_most(target),
        note,
        {"ours": walls[0]} if theirs is None else {"anchor": theirs, "ours": walls[0]},
    )


def _memory_row(name: str, sides: list[list[float]], note: str) -> Row:
    """A part B memory row (MiB; no target: the issues set none)."""
    theirs = sides[1] if len(sides) > 1 else None
    return Row(
        SECTION,
        name,
        "MB",
        None if theirs is None else median(theirs),
        median(sides[0]),
        None,
        note,
        {"ours": sides[0]} if theirs is None else {"anchor": theirs, "ours": sides[0]},
    )


def _memory_after_initialize(backend: Backend) -> Callable[[], Awaitable[float]]:
    async def measure() -> float:
        async with backend.start() as agent:
            await agent.initialize()
            return agent.peak_rss_mb()

    return measure
