"""Part B's start-up rows: spawn to the ``initialize`` answer in every configuration of the
model, and spawn to the first ``session/new`` answer, side by side with Hermes.

acpwire is started four ways: the model named (the configuration of the other rows), the
model left to the endpoint (the first one listed), the endpoint left to local discovery
(a loopback model server on the first candidate port, Ollama's 11434, while those runs
last), and nothing configured (no server on the candidate ports). ``initialize`` never
waits for the look-ups these need, so its rows should not differ; ``session/new`` waits
for them only where it needs a model. Hermes' configuration is the same in every row; its
samples are taken in turn with the acpwire side of each row.
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from acpwire.agent.embedded.provider import LOCAL_SERVERS
from acpwire.devtools.fake_llm import FakeLLM

from .backends import MODEL, acpwire_launch
from .client import Launch
from .results import Row, at_most, median
from .scenarios import Backend
from .stdio import alternate, cold_start

log = logging.getLogger(__name__)

INIT_TARGET = 0.45
SESSION_TARGET = 0.15
LOCAL_PORT = int(LOCAL_SERVERS[0].rsplit(":", 1)[1].split("/", 1)[0])


def _backend(workdir: Path, name: str, launch: Launch) -> Backend:
    workspace = workdir / f"{name}-workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    return Backend(name, launch, workdir / "logs" / f"{name}.log", workspace)


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def _local_server() -> Iterator[str]:
    """A loopback model server on the first local candidate port; what happened, as a note."""
    if _listening(LOCAL_PORT):
        yield f"a server already listened on port {LOCAL_PORT} and was discovered"
        return
    with FakeLLM(model=MODEL, port=LOCAL_PORT):
        yield f"the bench's loopback model server on port {LOCAL_PORT}"


def _starter(backend: Backend) -> Callable[[], Awaitable[float]]:
    return lambda: cold_start(backend.launch.argv, backend.launch.env, backend.log_path)


def _session_starter(backend: Backend) -> Callable[[], Awaitable[float]]:
    async def first_session() -> float:
        async with backend.start() as agent:
            await agent.initialize()
            await agent.new_session(backend.workspace)
            return time.perf_counter() - agent.started

    return first_session


def _row(section: str, name: str, samples: list[list[float]], target: float, note: str) -> Row:
    theirs = samples[-1] if len(samples) > 1 else None
    return Row(
        section,
        name,
        "s",
        None if theirs is None else median(theirs),
        median(samples[0]),
        at_most(target),
        note,
        {"ours": samples[0]} if theirs is None else {"anchor": theirs, "ours": samples[0]},
    )


async def run(
    section: str, workdir: Path, base_url: str, anchor: Backend | None, *, runs: int
) -> list[Row]:
    """The start-up rows (each side starts once unmeasured first)."""
    named = _backend(workdir, "acpwire", acpwire_launch(workdir / "acpwire-home", base_url))
    listed = _backend(
        workdir,
        "acpwire-listed",
        acpwire_launch(workdir / "acpwire-listed-home", base_url, model=None, context=False),
    )
    local = _backend(
        workdir,
        "acpwire-local",
        acpwire_launch(workdir / "acpwire-local-home", None, model=None, context=False),
    )
    anchors = [anchor] if anchor is not None else []
    rows: list[Row] = []
    closed = [p for p in (LOCAL_PORT, 8080, 1234) if not _listening(p)]
    for backend, label, note in (
        (named, "model named", "the configuration of the other rows"),
        (listed, "model from the endpoint", "the first model `GET /models` lists"),
        (local, "nothing configured", f"no server on the local candidate ports ({closed})"),
    ):
        log.info("startup: initialize, %s, %d runs per side", label, runs)
        samples = await alternate([_starter(b) for b in [backend, *anchors]], runs)
        rows.append(
            _row(
                section,
                f"Cold start to the initialize answer: {label}",
                samples,
                INIT_TARGET,
                f"fresh process, home already initialised; {note}; median of {runs}",
            )
        )
    with _local_server() as where:
        log.info("startup: initialize, local discovery, %d runs per side", runs)
        samples = await alternate([_starter(b) for b in [local, *anchors]], runs)
        rows.append(
            _row(
                section,
                "Cold start to the initialize answer: local discovery",
                samples,
                INIT_TARGET,
                f"no endpoint configured; {where}; median of {runs}",
            )
        )
        log.info("startup: session/new, local discovery, %d runs per side", runs)
        local_new = await alternate([_session_starter(b) for b in [local, *anchors]], runs)
    for backend, label in ((named, "model named"), (listed, "model from the endpoint")):
        log.info("startup: session/new, %s, %d runs per side", label, runs)
        samples = await alternate([_session_starter(b) for b in [backend, *anchors]], runs)
        rows.append(
            _row(
                section,
                f"Cold start to the first `session/new` answer: {label}",
                samples,
                SESSION_TARGET,
                "spawn, `initialize`, `session/new`: what an editor opening a thread waits "
                f"for; median of {runs}",
            )
        )
    rows.append(
        _row(
            section,
            "Cold start to the first `session/new` answer: local discovery",
            local_new,
            SESSION_TARGET,
            f"as the row above, the endpoint and model discovered; median of {runs}",
        )
    )
    return rows
