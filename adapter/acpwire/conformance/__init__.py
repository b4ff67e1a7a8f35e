"""Conformance: what one side of an ACP connection sent, checked against the protocol.

:class:`ProtocolChecker` takes each message of a connection with its direction and
returns :class:`Finding` values (violations, and information about methods it cannot
check), citing the spec section each rests on; :data:`RULES` lists the rules. It has no
side effects (no I/O, no logging): ``acpwire tap`` feeds it live (docs/TAP.md), a
conformance run can feed it a recorded or scripted exchange the same way.
"""

from .checker import AGENT_TO_CLIENT, CLIENT_TO_AGENT, Direction, Finding, ProtocolChecker
from .rules import RULES, Level, Rule

__all__ = [
    "AGENT_TO_CLIENT",
    "CLIENT_TO_AGENT",
    "RULES",
    "Direction",
    "Finding",
    "Level",
    "ProtocolChecker",
    "Rule",
]
