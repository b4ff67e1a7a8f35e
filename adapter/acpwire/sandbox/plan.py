"""One command's :class:`~acpwire.agent.seam.CommandPlan` from the backend's settings.

Joins the pieces: the decision (:mod:`.decide`), the policy paths (:mod:`.policy`), the
bubblewrap argv (:mod:`.bwrap`), the scrubbed environment (:mod:`.environment`) and, for
a sandboxed command, the guard that holds the protected paths at every depth and checks
what the command left (:mod:`.guard`; a workspace too large for its walk is asked). The
hidden homes are acpwire's config home and Hermes' (``$HERMES_HOME``, default
``~/.hermes``); the secrets are ``OPENAI_API_KEY``, the names the config home's ``.env``
defined and the configured ``api_key``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from acpwire.agent.embedded.tools.danger import dangerous_reason
from acpwire.agent.seam import CommandPlan
from acpwire.config import Settings
from acpwire.config.environment import command_env, secret_spec
from acpwire.sandbox.bwrap import env_argv
from acpwire.sandbox.decide import READ_ONLY_GIT_ENV, Escalation, decide_command
from acpwire.sandbox.probe import SandboxStatus, sandbox_status
from acpwire.sandbox.protected.guard import SandboxGuard

__all__ = ["config_homes", "plan_command", "secret_spec"]


def config_homes(settings: Settings, env: Mapping[str, str] | None = None) -> list[Path]:
    """acpwire's config home and Hermes' home: hidden from every sandboxed command."""
    env = os.environ if env is None else env
    hermes = env.get("HERMES_HOME", "").strip()
    return [settings.home, Path(hermes).expanduser() if hermes else Path.home() / ".hermes"]


def plan_command(
    command: str,
    cwd: str,
    *,
    mode: str,
    settings: Settings,
    escalation: Escalation = "sandbox",
    justification: str = "",
    status: SandboxStatus | None = None,
) -> CommandPlan:
    """How ``command`` runs in a session in ``mode`` whose workspace is ``cwd``."""
    status = sandbox_status() if status is None else status
    decision = decide_command(
        command,
        mode=mode,
        sandbox_available=status.available,
        danger=dangerous_reason(command),
        escalation=escalation,
        justification=justification,
        cwd=cwd,
        extra_sensitive=settings.sensitive_paths,
    )
    env = command_env(secret_spec(settings))
    if decision.sandboxed and status.bwrap is not None:
        guard = SandboxGuard(
            bwrap=status.bwrap,
            command=command,
            env=env,
            cwd=cwd,
            home=settings.home,
            hidden_homes=config_homes(settings),
            network=decision.network,
            extra_sensitive=settings.sensitive_paths,
        )
        ask = decision.ask
        problem = guard.survey()
        if problem is not None:
            guard.incomplete_ok = True  # the user is asked, told so
            ask = f"{problem}; {ask}" if ask else problem
        return CommandPlan(ask, (), env, True, decision.leaves_sandbox, guard)
    if decision.read_only:
        env = {**env, **READ_ONLY_GIT_ENV}
    argv = env_argv(env, ["bash", "-c", command])
    return CommandPlan(decision.ask, tuple(argv), env, False, decision.leaves_sandbox)
