"""The per-connection answer to "may the backend use this protocol feature?".

Built once from the client's ``initialize`` params; the rest of the adapter asks it and
never checks capabilities itself. Each decision combines three inputs: what the bindings
can express (:class:`SchemaFeatures`), what the client advertised (:class:`ClientSignals`)
and how the client is known to behave (:class:`QuirkProfile`). A feature is used only
when all three allow it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Final, Literal

from acp_v1.models import InitializeRequest

from .features import SchemaFeatures, default_features
from .gates import BASELINE_UPDATES, method_allowed, update_allowed
from .quirks import KNOWN_CLIENTS, KnownClient, QuirkProfile, identify
from .signals import ClientIdentity, ClientSignals, read_initialize
from .version import negotiate

logger = logging.getLogger(__name__)

CancelledOutcome = Literal["deny", "cancel_turn"]
Described = dict[str, str | int | float | bool | list[str] | None]

#: Kinds in the order they are offered: auto-approvers pick the first allow option or the
#: first option of all (client-quirks.md §4.6), so the narrowest grant comes first.
_PERMISSION_ORDER: Final = ("allow_once", "allow_always", "reject_once", "reject_always")
_TERMINAL_METHODS: Final = (
    "terminal/create",
    "terminal/output",
    "terminal/release",
    "terminal/wait_for_exit",
    "terminal/kill",
)


@dataclass(frozen=True, slots=True)
class ConnectionProbe:
    """What the backend may do on one ACP connection."""

    features: SchemaFeatures
    signals: ClientSignals
    client: ClientIdentity | None
    profile: QuirkProfile
    detected_by: str | None
    """What identified the client (``clientInfo.name``, ``_meta.jetbrains.air``) or None."""
    protocol_version: int
    """The version to answer in ``InitializeResponse``."""
    unstable_opt_in: bool = False
    """The agent enabled unstable protocol features for this connection."""

    @classmethod
    def from_initialize(
        cls,
        params: InitializeRequest,
        features: SchemaFeatures | None = None,
        *,
        unstable_opt_in: bool = False,
        known_clients: tuple[KnownClient, ...] = KNOWN_CLIENTS,
    ) -> ConnectionProbe:
        """Decide everything from the typed ``initialize`` params (of any bindings)."""
        features = features if features is not None else default_features()
        identity, signals = read_initialize(params)
        found = identify(identity, signals, known_clients)
        probe = cls(
            features=features,
            signals=signals,
            client=identity,
            profile=found.profile,
            detected_by=found.detected_by,
            protocol_version=negotiate(params.protocol_version, (features.protocol_version,)),
            unstable_opt_in=unstable_opt_in,
        )
        if found.detected_by is None:
            logger.debug("unrecognised ACP client %r: conservative profile", probe.client_name)
        return probe

    # -- identity --------------------------------------------------------------------

    @property
    def client_name(self) -> str | None:
        return self.client.name if self.client else None

    # -- client-side methods ---------------------------------------------------------

    def may_call(self, method: str) -> bool:
        """Whether the agent may send this request or notification to the client.

        Never an ``fs/*``, ``terminal/*`` or ``elicitation/*`` call the client did not
        advertise, never an unstable method, never one the bindings do not know. An
        ``_``-prefixed extension method only goes to a client known to answer methods it
        does not handle; elsewhere it could wait forever.
        """
        if method.startswith("_"):
            return self.profile.answers_unknown_requests
        info = self.features.client_method(method)
        if info is None or info.unstable:
            return False
        return method_allowed(method, self.signals)

    @property
    def can_read_files(self) -> bool:
        return self.may_call("fs/read_text_file")

    @property
    def can_write_files(self) -> bool:
        return self.may_call("fs/write_text_file")

    @property
    def can_use_terminal(self) -> bool:
        """All ``terminal/*`` calls, and ``{type: "terminal"}`` tool-call content."""
        return all(self.may_call(m) for m in _TERMINAL_METHODS)

    @property
    def can_elicit_form(self) -> bool:
        return self.signals.elicitation_form and self.may_call("elicitation/create")

    @property
    def can_elicit_url(self) -> bool:
        return (
            self.signals.elicitation_url
            and self.may_call("elicitation/create")
            and self.may_call("elicitation/complete")
        )

    # -- capabilities that shape the agent's own answers ----------------------------

    @property
    def can_offer_terminal_auth(self) -> bool:
        """An ``AuthMethod`` of ``type: "terminal"`` may be listed (``auth.terminal``)."""
        return self.signals.auth_terminal and "auth" in self.features.client_capabilities

    @property
    def supports_boolean_config(self) -> bool:
        """``SessionConfigOption`` of ``type: "boolean"`` may be sent."""
        return (
            self.signals.config_boolean
            and "configOptions" in self.features.client_session_capabilities
        )

    @property
    def streams_terminal_output_meta(self) -> bool:
        """Zed's ``_meta.terminal_output``: terminal output may ride in tool-call ``_meta``."""
        return self.signals.terminal_output_meta

    # -- session/update --------------------------------------------------------------

    def can_send_update(self, tag: str) -> bool:
        """Whether a ``session/update`` variant may be sent on this connection."""
        return (
            self.features.has_update(tag)
            and tag not in self.profile.rejected_updates
            and update_allowed(tag, self.signals, unstable_opt_in=self.unstable_opt_in)
        )

    def sendable_updates(self) -> frozenset[str]:
        return frozenset(t for t in self.features.update_tags if self.can_send_update(t))

    @property
    def may_send_before_session_response(self) -> bool:
        """Updates for a session may precede the ``session/new`` answer."""
        return not self.profile.drops_updates_before_session_response

    @property
    def may_send_replay_after_load_response(self) -> bool:
        """``session/load`` replay may follow the answer (else it must precede it)."""
        return self.profile.replay_after_load_response_ok

    # -- permissions -----------------------------------------------------------------

    def permission_option_kinds(self) -> tuple[str, ...]:
        """The kinds to offer, narrowest first, one option per kind.

        ``reject_always`` only where the bindings have it and the client is not known to
        leave it out of its UI.
        """
        known = set(self.features.permission_option_kinds)
        kinds = [k for k in _PERMISSION_ORDER if k in known]
        if not self.profile.offers_reject_always and "reject_always" in kinds:
            kinds.remove("reject_always")
        return tuple(kinds)

    @property
    def shows_first_content_only(self) -> bool:
        """The permission dialog shows only the first content item (one diff)."""
        return self.profile.shows_first_content_only

    @property
    def renders_tool_content(self) -> bool:
        """Tool-call content of type ``content`` is shown (not only diffs and terminals)."""
        return self.profile.renders_tool_content_blocks

    @property
    def empty_read_may_mean_missing(self) -> bool:
        """An empty ``fs/read_text_file`` answer may stand for "no such file"."""
        return self.profile.empty_read_may_mean_missing

    @property
    def one_option_per_kind(self) -> bool:
        """Offer at most one permission option of each kind (client-quirks.md §4.6)."""
        return self.profile.keys_options_by_kind

    @property
    def may_request_permission_outside_prompt(self) -> bool:
        return not self.profile.permission_requests_only_during_prompt

    @property
    def treat_cancelled_outcome_as(self) -> CancelledOutcome:
        """What a ``cancelled`` permission outcome means for the pending tool call.

        Always at least a denial. Only where ``cancelled`` can mean nothing but "the turn
        is being cancelled" does it end the turn at once; elsewhere the turn goes on with
        the tool denied, and a real cancel still arrives as ``session/cancel``.
        """
        return "deny" if self.profile.cancelled_outcome_is_dismissal else "cancel_turn"

    # -- other -----------------------------------------------------------------------

    def tool_kind(self, kind: str) -> str:
        """``kind`` if the bindings know it, else ``other`` (strict clients reject unknowns)."""
        return kind if kind in self.features.tool_kinds else "other"

    @property
    def sync_response_budget_s(self) -> float:
        """Answer ``session/new`` / ``session/load`` within this; defer slower work."""
        return self.profile.sync_timeout_s

    def describe(self, *, sessions: bool = True) -> Described:
        """The decisions as a flat, JSON-ready dict for one log line; without
        ``sessions``, only those answering ``initialize`` reads (the rest,
        :meth:`describe_sessions`, loads the update and permission models)."""
        described: Described = {
            "bindings": self.features.package,
            "protocol_version": self.protocol_version,
            "client": self.client_name,
            "client_version": self.client.version if self.client else None,
            "profile": self.profile.family,
            "detected_by": self.detected_by,
            "fs_read": self.can_read_files,
            "fs_write": self.can_write_files,
            "terminal": self.can_use_terminal,
            "elicitation_form": self.can_elicit_form,
            "elicitation_url": self.can_elicit_url,
            "terminal_auth": self.can_offer_terminal_auth,
            "boolean_config": self.supports_boolean_config,
            "updates_before_session_response": self.may_send_before_session_response,
            "permission_outside_prompt": self.may_request_permission_outside_prompt,
            "cancelled_outcome": self.treat_cancelled_outcome_as,
            "sync_budget_s": self.sync_response_budget_s,
            "unstable_opt_in": self.unstable_opt_in,
        }
        return {**described, **self.describe_sessions()} if sessions else described

    def describe_sessions(self) -> Described:
        """The decisions about session updates and permission options."""
        return {
            "extra_updates": sorted(self.sendable_updates() - BASELINE_UPDATES),
            "permission_kinds": list(self.permission_option_kinds()),
        }
