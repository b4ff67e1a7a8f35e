"""``acpwire self-check`` / ``--check``: import everything, read the config, find the model;
one line on stdout, exit code 0 when a model is usable."""

from __future__ import annotations

import argparse

from acpwire.cli._start import backend_settings
from acpwire.config import Settings

__all__ = ["run", "run_check"]


def run(args: argparse.Namespace) -> int:
    settings = backend_settings(args.log_level)
    if isinstance(settings, int):
        return settings
    ok, line = run_check(settings, args.agent)
    print(line)
    return 0 if ok else 1


def run_check(settings: Settings, agent: str | None = None) -> tuple[bool, str]:
    """(ok, one line describing the result), for the agent the backend would serve
    (``agent``: the ``--agent`` spec, else ``ACPWIRE_AGENT``)."""
    try:
        import acp_v1.dispatch  # noqa: F401
        from acpwire.server.process.choice import AgentSpecError, choose_factory
    except Exception as exc:  # a broken install: say what is missing
        return False, f"acpwire self-check FAILED: import error: {exc}"
    from acpwire.agent.embedded.factory import DefaultAgentFactory

    try:
        factory = choose_factory(settings, agent)
    except AgentSpecError as exc:
        return False, f"acpwire self-check FAILED: {exc}"
    if not factory.configured():
        return False, f"acpwire self-check FAILED: {factory.problem}. {factory.setup_hint}"
    if isinstance(factory, DefaultAgentFactory):
        problem = factory.reachable()
        if problem is not None:
            return False, f"acpwire self-check FAILED: {problem}"
    models = factory.available_models()
    from acpwire.sandbox import sandbox_status

    return True, (
        f"acpwire check OK: {factory.name}, provider {factory.provider}, "
        f"{len(models)} model(s) listed, config home {settings.home}; "
        f"{sandbox_status().hint}"
    )
