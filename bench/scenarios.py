"""Part B's four scenarios, each run against one backend (any ACP agent command).

Every scenario drives the backend with :mod:`bench.client` and checks that the work
really happened (all text arrived, every session got its own answer, the history was
replayed) before returning its timings in seconds. What the model says is decided by
the loopback model server's rules, matched on the marker words below.
"""

from __future__ import annotations

import logging
import time
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx

from acp_v1 import models as m

from .client import Launch, Spawned, spawn

log = logging.getLogger(__name__)

LONG_MARKER, MANY_MARKER, TURN_MARKER = "BENCH-LONG", "BENCH-MANY", "BENCH-TURN"
TOKEN = " tok"
LONG_TOKENS, MANY_TOKENS = 5_000, 200
TURN_TEXT = "A short answer from the model, so that the history has some substance to it."
WAIT_TEXT = 60.0


def model_rules() -> list[dict[str, object]]:
    """The model server's rules: one streamed token per SSE event for the long replies."""

    def reply(marker: str, text: str, chunks: int) -> dict[str, object]:
        usage = {"prompt_tokens": 50, "completion_tokens": chunks}
        return {"match": marker, "text": text, "chunks": chunks, "usage": usage}

    return [
        reply(LONG_MARKER, TOKEN * LONG_TOKENS, LONG_TOKENS),
        reply(MANY_MARKER, TOKEN * MANY_TOKENS, MANY_TOKENS),
        reply(TURN_MARKER, TURN_TEXT, 10),
    ]


@dataclass(frozen=True)
class Sample:
    """One measured window: wall seconds, CPU seconds the backend process used in it, and
    (where measured) the backend's peak resident memory at its end, MiB."""

    wall: float
    cpu: float
    peak_mb: float = 0.0


@dataclass(frozen=True)
class Backend:
    """One backend under test: how to start it, where it logs, which cwd its sessions use."""

    name: str
    launch: Launch
    log_path: Path
    workspace: Path

    def start(self) -> AbstractAsyncContextManager[Spawned]:
        """Spawn a fresh process of this backend, connected to the bench's client."""
        return spawn(self.launch.argv, env=self.launch.env, log_path=self.log_path)


async def _streamed(agent: Spawned, session: str, text: str, expected: str) -> float:
    """Prompt, then wait for the answer and the whole expected text; seconds taken."""
    agent.client.forget(session)
    start = time.perf_counter()
    answer = await agent.prompt(session, text)
    with anyio.move_on_after(WAIT_TEXT):
        # Text that trails the answer still counts; our client handles everything sent
        # before the answer first, so this only waits for a backend that sends late.
        await agent.client.wait_for_chars(session, len(expected))
    elapsed = time.perf_counter() - start
    got = agent.client.text(session)
    if answer.stop_reason != "end_turn" or got.strip() != expected.strip():
        raise RuntimeError(
            f"{text!r}: stop {answer.stop_reason}, {len(got)}/{len(expected)} characters"
        )
    return elapsed


async def _warm(agent: Spawned, backend: Backend) -> None:
    """One small turn, so a backend's first-prompt set-up is not charged to a scenario."""
    session = await agent.new_session(backend.workspace)
    await agent.prompt(session, "hello")


async def long_reply(backend: Backend, runs: int) -> list[Sample]:
    """Prompt to answer for a 5,000-token streamed reply, each run on a fresh session."""
    expected = TOKEN * LONG_TOKENS
    async with backend.start() as a:
        await a.initialize()
        await _warm(a, backend)
        samples = []
        for _ in range(runs):
            session = await a.new_session(backend.workspace)
            cpu = a.cpu_seconds()
            wall = await _streamed(a, session, f"{LONG_MARKER} please", expected)
            samples.append(Sample(wall, a.cpu_seconds() - cpu))
        return samples


async def many_sessions(backend: Backend, count: int, runs: int) -> list[Sample]:
    """``count`` fresh sessions prompted at once; first prompt sent → last answer done."""
    expected = TOKEN * MANY_TOKENS
    async with backend.start() as a:
        await a.initialize()
        await _warm(a, backend)
        samples = []
        for _ in range(runs):
            sessions = [await a.new_session(backend.workspace) for _ in range(count)]
            times: list[float] = []
            cpu, start = a.cpu_seconds(), time.perf_counter()
            async with anyio.create_task_group() as tg:
                for index, session in enumerate(sessions):
                    prompt = f"{MANY_MARKER} session {index}"
                    tg.start_soon(_collect, a, session, prompt, expected, times)
            wall = time.perf_counter() - start
            samples.append(Sample(wall, a.cpu_seconds() - cpu, a.peak_rss_mb()))
            if len(times) != count:
                raise RuntimeError(f"only {len(times)}/{count} sessions finished")
        return samples


async def _collect(
    agent: Spawned, session: str, prompt: str, expected: str, into: list[float]
) -> None:
    into.append(await _streamed(agent, session, prompt, expected))


async def build_history(backend: Backend, turns: int) -> str:
    """A session with ``turns`` prompt turns, made through the backend; its id."""
    async with backend.start() as a:
        await a.initialize()
        session = await a.new_session(backend.workspace)
        for turn in range(turns):
            await _streamed(a, session, f"{TURN_MARKER} {turn}", TURN_TEXT)
        return session


async def load_history(backend: Backend, session: str, runs: int) -> tuple[list[Sample], int]:
    """``session/load`` right after a restart: the samples, and how many updates replayed."""
    samples, replayed = [], 0
    for _ in range(runs):
        async with backend.start() as agent:
            await agent.initialize()
            cpu, start = agent.cpu_seconds(), time.perf_counter()
            await agent.peer.session_load(
                m.LoadSessionRequest(session_id=session, cwd=str(backend.workspace), mcp_servers=[])
            )
            samples.append(Sample(time.perf_counter() - start, agent.cpu_seconds() - cpu))
            replayed = agent.client.updates[session]
            if TURN_TEXT not in agent.client.text(session):
                raise RuntimeError(f"session/load replayed no assistant text ({replayed} updates)")
    return samples, replayed


async def model_alone(base_url: str, sessions: int, runs: int) -> tuple[list[float], list[float]]:
    """The floor: the model server's streams read raw, no backend (long; many at once)."""

    async def read(client: httpx.AsyncClient, text: str) -> None:
        body = {"model": "bench", "stream": True, "messages": [{"role": "user", "content": text}]}
        async with client.stream("POST", f"{base_url}/chat/completions", json=body) as response:
            async for _chunk in response.aiter_bytes():
                pass

    long, many = [], []
    async with httpx.AsyncClient(timeout=WAIT_TEXT) as client:
        await read(client, "hello")
        for _ in range(runs):
            start = time.perf_counter()
            await read(client, LONG_MARKER)
            long.append(time.perf_counter() - start)
            start = time.perf_counter()
            async with anyio.create_task_group() as tg:
                for index in range(sessions):
                    tg.start_soon(read, client, f"{MANY_MARKER} {index}")
            many.append(time.perf_counter() - start)
    return long, many
