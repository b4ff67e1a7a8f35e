"""``python -m bench``: run every benchmark part and write ``docs/BENCHMARKS.md``.

Progress goes to stderr. Child-process logs and the raw samples land in
``bench/results/`` (not committed). A part that fails is reported in the document and
makes the exit status 1; the other parts still run.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from . import e2e, hermes_turn, micro, report, startup, stdio, tap
from .backends import HERMES_VENV, compile_acpwire, ensure_hermes
from .results import REPO, Row, Skipped

log = logging.getLogger("bench")

RESULTS = REPO / "bench" / "results"
DOC = REPO / "docs" / "BENCHMARKS.md"
ANCHORS = {
    micro.SECTION: "SDK 0.12.1",
    stdio.SECTION: "SDK 0.12.1",
    e2e.SECTION: "Hermes 0.19.0",
    hermes_turn.SECTION: "anchor (row 1: before the boundary; row 2: hermes-acp)",
    tap.SECTION: "directly",
}


@dataclass(frozen=True)
class Sizes:
    """How much work each part does (``--quick`` shrinks everything for a smoke run)."""

    messages: int = 10_000
    repeats: int = 7
    runs: int = 5
    start_runs: int = 9
    long_runs: int = 3
    sessions: int = 20
    many_runs: int = 3
    turns: int = 50
    load_runs: int = 3
    tool_runs: int = 7


QUICK = Sizes(
    messages=1_000,
    repeats=3,
    runs=2,
    start_runs=2,
    long_runs=1,
    sessions=5,
    many_runs=1,
    turns=5,
    load_runs=1,
    tool_runs=2,
)


@dataclass
class Run:
    rows: list[Row] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    failed: bool = False

    def part(self, section: str, fn: Callable[[], list[Row]]) -> None:
        started = time.perf_counter()
        try:
            self.rows += fn()
        except Exception as exc:
            log.exception("%s failed", section)
            self.skipped.append(Skipped(section, f"the run failed: {type(exc).__name__}: {exc}"))
            self.failed = True
        log.info("%s: %.0f s", section, time.perf_counter() - started)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--skip-hermes", action="store_true", help="measure part B without Hermes")
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument(
        "--only",
        choices=["micro", "stdio", "e2e", "startup", "hermes", "tap"],
        action="append",
        help="run only these parts",
    )
    parser.add_argument("--output", type=Path, help="where to write the document")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    sizes = QUICK if args.quick else Sizes()
    parts = set(args.only or ["micro", "stdio", "e2e", "hermes", "tap"])
    partial = args.quick or args.only is not None
    output = args.output or (RESULTS / "BENCHMARKS.partial.md" if partial else DOC)
    workdir = RESULTS / "last-run"
    shutil.rmtree(workdir, ignore_errors=True)
    (workdir / "logs").mkdir(parents=True)
    compile_acpwire()  # start from bytecode, as an installed package does

    hermes_problem: str | None = "--skip-hermes was given" if args.skip_hermes else None
    if parts & {"e2e", "startup", "hermes"} and hermes_problem is None:
        hermes_problem = ensure_hermes()
        if hermes_problem:
            log.warning("Hermes is not available, part B runs without it: %s", hermes_problem)
    machine = report.machine(None if hermes_problem else HERMES_VENV / "bin" / "python")
    run = Run()
    if "micro" in parts:
        run.part(micro.SECTION, lambda: micro.run(sizes.messages, sizes.repeats))
    with e2e.model_server(workdir) as base_url:
        mine = e2e.ours(workdir, base_url)
        if "stdio" in parts:
            run.part(
                stdio.SECTION,
                lambda: anyio.run(
                    lambda: stdio.run(
                        workdir / "logs", backend=mine.launch, n=sizes.messages, runs=sizes.runs
                    )
                ),
            )
        if "e2e" in parts:
            if hermes_problem:
                run.skipped.append(Skipped(e2e.SECTION, f"Hermes: {hermes_problem}"))
            anchor = None if hermes_problem else e2e.hermes(workdir, base_url)
            run.part(
                e2e.SECTION,
                lambda: anyio.run(
                    lambda: e2e.run(
                        mine,
                        anchor,
                        base_url,
                        cold_runs=sizes.runs,
                        start_runs=sizes.start_runs,
                        long_runs=sizes.long_runs,
                        sessions=sizes.sessions,
                        many_runs=sizes.many_runs,
                        turns=sizes.turns,
                        load_runs=sizes.load_runs,
                    )
                ),
            )
        if "hermes" in parts:
            problem = hermes_problem or hermes_turn.available()
            if problem:
                run.skipped.append(Skipped(hermes_turn.SECTION, f"Hermes: {problem}"))
            else:
                run.part(
                    hermes_turn.SECTION,
                    lambda: anyio.run(
                        lambda: hermes_turn.run(
                            workdir, base_url, runs=sizes.tool_runs, with_anchor=True
                        )
                    ),
                )
        if "tap" in parts:
            run.part(
                tap.SECTION,
                lambda: anyio.run(
                    lambda: tap.run(
                        workdir,
                        mine,
                        n=sizes.messages,
                        runs=sizes.runs,
                        long_runs=sizes.long_runs,
                    )
                ),
            )
        if "startup" in parts and "e2e" not in parts:  # part B's start-up rows alone
            if hermes_problem:
                run.skipped.append(Skipped(e2e.SECTION, f"Hermes: {hermes_problem}"))
            anchor = None if hermes_problem else e2e.hermes(workdir, base_url)
            run.part(
                e2e.SECTION,
                lambda: anyio.run(
                    lambda: startup.run(
                        e2e.SECTION, workdir, base_url, anchor, runs=sizes.start_runs
                    )
                ),
            )
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(report.render(machine, run.rows, run.skipped, ANCHORS), encoding="utf-8")
    report.dump(RESULTS / "latest.json", machine, run.rows, run.skipped)
    log.info("wrote %s", output)
    return 1 if run.failed else 0


if __name__ == "__main__":
    sys.exit(main())
