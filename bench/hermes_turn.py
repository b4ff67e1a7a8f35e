"""Part C: a tool-using Hermes turn, Hermes behind acpwire against ``hermes-acp`` 0.19.0.

Both sides run the same Hermes ``AIAgent`` (hermes-agent 0.19.0) against the same
loopback model; what differs is the ACP front and what runs the tools: under acpwire
every tool call goes through its boundary (``acpwire.hermes.boundary``: ``read_file`` and
``search_files`` are acpwire's tools, ``terminal`` runs in the command sandbox with the
check after it), under ``hermes-acp`` through Hermes' own tools. The measured turn is one
prompt whose model reply calls ``read_file``, ``search_files`` and ``terminal`` (``ls``),
then answers: prompt sent to answer received, each run on a fresh session of a warm
process. A third side is acpwire as it was before the boundary (commit :data:`BEFORE`,
unpacked from the repository's history): the boundary's own cost, before against after
in the same run (target, issue #24: at most 5 %). The model's rules are numbered slots (``BENCH-TOOLS-<n>.``), one per turn, since
a rule for a tool call fires once.
"""

from __future__ import annotations

import itertools
import logging
import subprocess
import tempfile
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
BEFORE = "d8f441b"
"""main just before Hermes' boundary landed (issue 24): the before-side of the cost row."""
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


def before_boundary(workdir: Path, base_url: str) -> Backend | None:
    """acpwire serving Hermes as it was before the boundary landed (commit
    :data:`BEFORE`, unpacked from this repository's history), or None without that
    history (a shallow clone): the same launch with ``PYTHONPATH`` on the old sources."""
    # Outside the repository (type checkers and linters walk bench/), kept between runs.
    tree = Path(tempfile.gettempdir()) / f"acpwire-bench-before-{BEFORE}"
    if not (tree / "adapter").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", BEFORE, "adapter", "generated"],
            capture_output=True,
            check=False,
        )
        if archive.returncode != 0:
            log.warning("no commit %s here (%s): no before-side", BEFORE, archive.stderr[-200:])
            return None
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    mine = ours(workdir / "c-before", base_url)
    path = f"{tree / 'adapter'}:{tree / 'generated'}"
    launch = Launch(mine.launch.argv, {**mine.launch.env, "PYTHONPATH": path})
    return Backend("acpwire-hermes-before", launch, mine.log_path, mine.workspace)


def _spread(samples: list[Sample]) -> str:
    walls = [s.wall for s in samples]
    return f"{min(walls):.3f}-{max(walls):.3f} s"


async def run(workdir: Path, base_url: str, *, runs: int, with_anchor: bool) -> list[Row]:
    """The tool turn on each side, sides taking turns over three rounds."""
    sides: dict[str, tuple[Backend, bool]] = {"after": (ours(workdir, base_url), True)}
    before = before_boundary(workdir, base_url)
    if before is not None:
        sides["before"] = (before, True)
    if with_anchor:
        sides["hermes-acp"] = (anchor(workdir, base_url), False)
    samples: dict[str, list[Sample]] = {name: [] for name in sides}
    per_round = max(1, runs // 3)
    for _ in range(3):
        for name, (backend, all_ends) in sides.items():
            log.info("hermes turn: %s, %d runs", name, per_round)
            samples[name] += await tool_turns(backend, per_round, all_ends=all_ends)
    walls = {name: [s.wall for s in got] for name, got in samples.items()}
    cpus = {name: median([s.cpu for s in got]) for name, got in samples.items()}
    common = (
        "read_file + search_files + terminal (`ls -la`) then the answer; fresh session of a"
        f" warm process, after one warm-up turn; sides alternating over 3 rounds, median of"
        f" {3 * per_round}"
    )
    rows: list[Row] = []
    if "before" in walls:
        rows.append(
            Row(
                SECTION,
                "Tool-using Hermes turn behind acpwire: the boundary's cost (before -> after)",
                "s",
                median(walls["before"]),
                median(walls["after"]),
                at_most(1.05),
                f"{common}; anchor: commit {BEFORE} (before the boundary) from this"
                f" repository's history; min-max before {_spread(samples['before'])}, after"
                f" {_spread(samples['after'])}; backend CPU before {cpus['before']:.2f} s,"
                f" after {cpus['after']:.2f} s",
                {"anchor": walls["before"], "ours": walls["after"]},
            )
        )
    if "hermes-acp" in walls:
        rows.append(
            Row(
                SECTION,
                "Tool-using Hermes turn: behind acpwire vs hermes-acp",
                "s",
                median(walls["hermes-acp"]),
                median(walls["after"]),
                None,
                f"{common}; hermes-acp runs its own unsandboxed tools, acpwire runs `ls` in the"
                f" command sandbox; min-max acpwire {_spread(samples['after'])}, hermes-acp"
                f" {_spread(samples['hermes-acp'])}; backend CPU acpwire {cpus['after']:.2f} s,"
                f" hermes-acp {cpus['hermes-acp']:.2f} s",
                {"anchor": walls["hermes-acp"], "ours": walls["after"]},
            )
        )
    return rows
