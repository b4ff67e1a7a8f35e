"""Part C: a tool-using Hermes turn, Hermes behind acpwire against ``hermes-acp`` 0.19.0.

Both sides run the same Hermes ``AIAgent`` (hermes-agent 0.19.0) against the same
loopback model; what differs is the ACP front and what runs the tools: under acpwire
every tool call goes through its boundary (``acpwire.hermes.boundary``: ``read_file`` and
``search_files`` are acpwire's tools, ``terminal`` runs in the command sandbox with the
check after it), under ``hermes-acp`` through Hermes' own tools. The measured turn is one
prompt whose model reply calls ``read_file``, ``search_files`` and ``terminal`` (``ls``),
then answers: prompt sent to answer received, each run on a fresh session of a warm
process. The model's rules are numbered slots (``BENCH-TOOLS-<n>.``), one per turn, since
a rule for a tool call fires once.
"""

from __future__ import annotations

import itertools
import logging
import time
from pathlib import Path

from .backends import hermes_launch
from .client import Launch
from .results import REPO, Row, at_most, median
from .scenarios import Backend, Sample

log = logging.getLogger(__name__)

SECTION = "C. Hermes behind acpwire vs hermes-acp 0.19.0 (a tool-using turn, same model)"
HERMES_ACPWIRE = REPO / "bench" / ".venvs" / "hermes-acpwire" / "bin" / "python"
"""The Python with hermes-agent and this checkout (``make hermes-venv``)."""
MARKER = "BENCH-TOOLS"
SLOTS = 40
ANSWER = "The tools are done."
TOOLS = 3
_slots = itertools.count()


def model_rules() -> list[dict[str, object]]:
    """``SLOTS`` turns' worth of rules: three tool calls, then the answer."""
    rules: list[dict[str, object]] = []
    for slot in range(SLOTS):
        marker = f"{MARKER}-{slot}."
        calls = [
            ("read_file", {"path": "notes.txt"}),
            ("search_files", {"pattern": "beta", "path": "."}),
            ("terminal", {"command": "ls -la"}),
        ]
        for index, (name, args) in enumerate(calls):
            call = {"id": f"bench_{slot}_{index}", "name": name, "arguments": args}
            rules.append({"match": marker, "times": 1, "tool_calls": [call]})
        rules.append({"match": marker, "times": 1, "text": ANSWER})
    return rules


def available() -> str | None:
    """None when acpwire can serve Hermes here, else why not."""
    if not HERMES_ACPWIRE.exists():
        return f"{HERMES_ACPWIRE} is missing (make hermes-venv)"
    return None


def ours(workdir: Path, base_url: str) -> Backend:
    """acpwire serving Hermes from the Hermes venv, with its own homes."""
    hermes_home, acpwire_home = workdir / "c-hermes-home", workdir / "c-acpwire-home"
    launch = hermes_launch(hermes_home, base_url)  # writes Hermes' config.yaml
    acpwire_home.mkdir(parents=True, exist_ok=True)
    env = {
        **launch.env,  # Hermes' home, no lazy installs, the dead proxies
        "ACPWIRE_AGENT": "hermes",
        "ACPWIRE_HOME": str(acpwire_home),
        "ACPWIRE_LOG_LEVEL": "WARNING",
    }
    return _backend("acpwire-hermes", workdir, Launch([str(HERMES_ACPWIRE), "-m", "acpwire"], env))


def anchor(workdir: Path, base_url: str) -> Backend:
    return _backend("hermes-acp", workdir, hermes_launch(workdir / "c-anchor-home", base_url))


def _backend(name: str, workdir: Path, launch: Launch) -> Backend:
    workspace = workdir / f"c-{name}-workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "notes.txt").write_text("alpha\nbeta\ngamma\n", encoding="utf-8")
    return Backend(name, launch, workdir / "logs" / f"c-{name}.log", workspace)


async def tool_turns(backend: Backend, runs: int, *, all_ends: bool = True) -> list[Sample]:
    """Prompt to answer of the three-tool turn, each on a fresh session, after one warm-up.
    ``all_ends``: check that every tool call was reported completed (hermes-acp 0.19.0
    loses some completions, a defect of its own)."""
    async with backend.start() as a:
        await a.initialize()
        samples: list[Sample] = []
        for attempt in range(runs + 1):
            session = await a.new_session(backend.workspace)
            prompt = f"{MARKER}-{next(_slots)}. use the tools"
            cpu, start = a.cpu_seconds(), time.perf_counter()
            answer = await a.prompt(session, prompt)
            wall = time.perf_counter() - start
            ended, failed = a.client.tools_ended[session], a.client.tools_ended["!" + session]
            incomplete = all_ends and ended != TOOLS
            if (
                answer.stop_reason != "end_turn"
                or incomplete
                or ANSWER not in a.client.text(session)
            ):
                raise RuntimeError(
                    f"{backend.name}: stop {answer.stop_reason}, {ended} tools completed,"
                    f" {failed} failed, text {a.client.text(session)!r}"
                )
            if attempt:  # the first turn warms Hermes' tool modules up
                samples.append(Sample(wall, a.cpu_seconds() - cpu))
        return samples


async def run(workdir: Path, base_url: str, *, runs: int, with_anchor: bool) -> list[Row]:
    mine = ours(workdir, base_url)
    theirs = anchor(workdir, base_url) if with_anchor else None
    log.info("hermes turn: %s, %d runs", mine.name, runs)
    ours_samples = await tool_turns(mine, runs)
    anchor_samples = None
    if theirs is not None:
        log.info("hermes turn: %s, %d runs", theirs.name, runs)
        anchor_samples = await tool_turns(theirs, runs, all_ends=False)
    walls = [s.wall for s in ours_samples]
    cpu = median([s.cpu for s in ours_samples])
    note = (
        f"read_file + search_files + terminal (`ls -la`) then the answer; fresh session of a"
        f" warm process, after one warm-up turn; median of {runs}; min-max acpwire"
        f" {min(walls):.3f}-{max(walls):.3f} s; backend CPU in the window: acpwire {cpu:.2f} s"
    )
    anchor_walls = None if anchor_samples is None else [s.wall for s in anchor_samples]
    if anchor_samples is not None and anchor_walls is not None:
        note += (
            f", hermes-acp {median([s.cpu for s in anchor_samples]):.2f} s; min-max hermes-acp"
            f" {min(anchor_walls):.3f}-{max(anchor_walls):.3f} s"
        )
    return [
        Row(
            SECTION,
            "Tool-using Hermes turn, prompt to answer",
            "s",
            None if anchor_walls is None else median(anchor_walls),
            median(walls),
            at_most(1.05),
            note,
            {"ours": walls} if anchor_walls is None else {"anchor": anchor_walls, "ours": walls},
        )
    ]
