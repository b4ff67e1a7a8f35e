"""Conformance: what one side of an ACP connection sent, checked against the protocol,
and a conformance run against an agent.

:class:`ProtocolChecker` takes each message of a connection with its direction and
returns :class:`Finding` values (violations, and information about methods it cannot
check), citing the spec section each rests on; :data:`RULES` lists the rules. It has no
side effects (no I/O, no logging): ``acpwire tap`` feeds it live (docs/TAP.md).

:func:`run_checks` (:mod:`.run`, ``acpwire check``, docs/CHECK.md) spawns an agent and
drives it through :data:`CHECKS` with a scripted client, every line both ways fed to a
checker; :mod:`.report` renders its :class:`RunReport` (text, Markdown, JSON, JUnit).

What this package may import: the bindings (``acp_v1``), pydantic, ``acpwire.probe``
(the checker's reading of capabilities), the standard library, and, for the run only,
``acpwire.devtools`` (the loopback scripted model, itself stdlib only). Not the runtime
(``acpwire.rpc``, anyio) nor the backend: the run is a raw line client, because it must
write what no typed client would (a line that is not JSON, params that do not validate,
a protocol version the bindings refuse) and see every byte the agent writes before
anything decodes it. The run does I/O (processes, a scratch folder, the loopback server);
the checker still does none.
"""

from typing import TYPE_CHECKING

from .checker import AGENT_TO_CLIENT, CLIENT_TO_AGENT, Direction, Finding, ProtocolChecker
from .rules import RULES, Level, Rule

if TYPE_CHECKING:
    from .run import (
        CHECKS as CHECKS,
        AgentStartError as AgentStartError,
        Check as Check,
        CheckResult as CheckResult,
        RunOptions as RunOptions,
        RunReport as RunReport,
        run_checks as run_checks,
    )

_RUN = frozenset(
    {"CHECKS", "AgentStartError", "Check", "CheckResult", "RunOptions", "RunReport", "run_checks"}
)


def __getattr__(name: str) -> object:
    # The run loads by need: the tap's recorder imports the checker alone.
    if name in _RUN:
        from . import run

        return getattr(run, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AGENT_TO_CLIENT",
    "CHECKS",
    "CLIENT_TO_AGENT",
    "RULES",
    "AgentStartError",
    "Check",
    "CheckResult",
    "Direction",
    "Finding",
    "Level",
    "ProtocolChecker",
    "Rule",
    "RunOptions",
    "RunReport",
    "run_checks",
]
