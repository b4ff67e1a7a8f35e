"""Capability probes: per connection, which ACP features the backend may use.

Build a :class:`ConnectionProbe` from the client's ``initialize`` params and ask it; do
not check client capabilities anywhere else. ``docs/CLIENT_QUIRKS.md`` describes the
client table.
"""

from .connection import ConnectionProbe
from .features import (
    MethodInfo,
    SchemaFeatures,
    SchemaIntrospectionError,
    default_features,
    read_features,
)
from .gates import BASELINE_UPDATES, GATED_UPDATES
from .quirks import CONSERVATIVE, KNOWN_CLIENTS, PROFILES, KnownClient, QuirkProfile, identify
from .signals import ClientIdentity, ClientSignals
from .version import negotiate

__all__ = [
    "BASELINE_UPDATES",
    "CONSERVATIVE",
    "GATED_UPDATES",
    "KNOWN_CLIENTS",
    "PROFILES",
    "ClientIdentity",
    "ClientSignals",
    "ConnectionProbe",
    "KnownClient",
    "MethodInfo",
    "QuirkProfile",
    "SchemaFeatures",
    "SchemaIntrospectionError",
    "default_features",
    "identify",
    "negotiate",
    "read_features",
]
