"""``acpwire --check``: import everything, read the config, find the model; one line out."""

from __future__ import annotations

from acpwire.config import Settings


def run_check(settings: Settings) -> tuple[bool, str]:
    """(ok, one line describing the result)."""
    try:
        import acp_v1.dispatch  # noqa: F401
        import acpwire.server.app  # noqa: F401
    except Exception as exc:  # a broken install: say what is missing
        return False, f"acpwire check FAILED: import error: {exc}"
    from acpwire.agents import DefaultAgentFactory

    factory = DefaultAgentFactory(settings.file_values)
    if not factory.configured():
        return False, f"acpwire check FAILED: {factory.problem} (run `acpwire --setup`)"
    problem = factory.reachable()
    if problem is not None:
        return False, f"acpwire check FAILED: {problem}"
    models = factory.available_models()
    return True, (
        f"acpwire check OK: provider {factory.provider}, {len(models)} model(s) listed, "
        f"config home {settings.home}"
    )
