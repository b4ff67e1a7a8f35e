"""A conformance run: an ACP agent spawned as an editor would, driven through what it
advertises by a scripted client, every message both ways checked by the
:class:`~acpwire.conformance.ProtocolChecker`.

:func:`run_checks` takes :class:`RunOptions` (the agent's command, which checks, bounds,
how the agent reads a model endpoint) and returns a :class:`RunReport`: one
:class:`CheckResult` per check of :data:`CHECKS` that ran, each PASS, FAIL or SKIP with
one line of evidence and the spec section it rests on. Rendering is :mod:`.report`. The
checks and these types are :mod:`._checklist`, the scripted client :mod:`._client` (over
:mod:`._wire`, one agent process spoken to line by line), the checks' bodies
:mod:`._checks`.

Never flaky: every wait is bounded (``timeout``; ``exit_timeout`` for the end of input)
and a wait that runs out is a FAIL naming what was waited for. A check that needs the
agent to act (a turn, a tool call, a permission request) runs against a loopback scripted
model (:mod:`._model` behind :class:`~acpwire.devtools.fake_llm.FakeLLM`, on 127.0.0.1)
when the options say how the agent is given an endpoint, and is SKIP otherwise. Nothing
leaves the machine.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Iterator

from ._checklist import (
    BY_NAME,
    CHECKS,
    AgentStartError,
    Check,
    CheckResult,
    RunOptions,
    RunReport,
    Status,
)
from ._checks import BODIES
from ._client import Run
from ._model import ScriptedModel

__all__ = [
    "BY_NAME",
    "CHECKS",
    "AgentStartError",
    "Check",
    "CheckResult",
    "RunOptions",
    "RunReport",
    "Status",
    "run_checks",
]


@contextlib.contextmanager
def _model(options: RunOptions) -> Iterator[tuple[ScriptedModel | None, str | None]]:
    if not options.wants_model:
        yield None, None
        return
    from acpwire.devtools.fake_llm import FakeLLM

    scripted = ScriptedModel(write_tool=options.write_tool, shell_tool=options.shell_tool)
    with FakeLLM(model=options.model_name, responder=scripted, context_length=131072) as llm:
        yield scripted, llm.base_url


def run_checks(options: RunOptions) -> RunReport:
    """Run the checks ``options`` select against the agent; AgentStartError when its
    command cannot be started. Every process the run started is ended before it returns."""
    unknown = sorted((set(options.only or ()) | options.skip) - set(BY_NAME))
    if unknown:
        raise ValueError(f"unknown checks: {', '.join(unknown)}")
    if not options.command:
        raise ValueError("no agent command")
    started = time.monotonic()
    with _model(options) as (scripted, base_url):
        run = Run(options, scripted, base_url)
        try:
            for check in CHECKS:
                if check.name != "initialize" and not run.initialized:
                    if options.selected(check.name):  # nothing else can run
                        run.record(CheckResult(check.name, "SKIP", "initialize failed", check.spec))
                    continue
                run.run(check.name, functools.partial(BODIES[check.name], run))
        finally:
            if run.main is not None:
                run.main.stop(grace=1.0)
            run.close()
    return RunReport(
        agent=run.agent,
        checks=[run.results[c.name] for c in CHECKS if c.name in run.results],
        seconds=time.monotonic() - started,
        model=base_url,
    )
