"""The table of known ACP client quirks, and how a connection is matched to a row.

Data, not scattered ``if client == ...``: one frozen :class:`QuirkProfile` per client
family. Every row starts from :data:`CONSERVATIVE` (what an unknown client gets) and
overrides only what a source shows; the source tags are those of
``shared/reference/client-quirks.md`` ([V] read in source, [L] wire log, [I] inferred).
``docs/CLIENT_QUIRKS.md`` is the human-readable copy of this table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final

from .signals import ClientIdentity, ClientSignals


@dataclass(frozen=True, slots=True)
class QuirkProfile:
    """How one client family behaves where the protocol leaves room (or is ignored)."""

    family: str
    label: str
    drops_updates_before_session_response: bool
    """``session/update`` for a session sent before the ``session/new`` answer is lost."""
    replay_after_load_response_ok: bool
    """``session/load`` replay may follow the load response (the spec says: before it)."""
    rejects_unknown_update_variants: bool
    """An unknown ``sessionUpdate`` tag fails the whole notification (strict SDK enum)."""
    answers_unknown_requests: bool
    """An agent->client request the client does not handle is answered (-32601), not left hanging."""
    offers_reject_always: bool
    """The permission UI shows a ``reject_always`` option."""
    keys_options_by_kind: bool
    """The permission UI labels or keys options by ``kind``: two options of one kind look
    the same there, or one of them cannot be chosen."""
    permission_requests_only_during_prompt: bool
    """``session/request_permission`` outside a running ``session/prompt`` is dropped."""
    cancelled_outcome_is_dismissal: bool
    """A ``cancelled`` permission outcome may mean "dialog dismissed", not "turn cancelled"."""
    shows_mode_updates: bool
    """``current_mode_update`` changes what the user sees."""
    reads_config_options: bool
    """The UI is built from ``configOptions`` (rather than legacy ``modes`` / ``models``)."""
    renders_tool_content_blocks: bool
    """Tool-call content of type ``content`` (not only ``diff`` / ``terminal``) is shown."""
    shows_first_content_only: bool
    """The permission dialog shows only the first content item of the tool call."""
    empty_read_may_mean_missing: bool
    """``fs/read_text_file`` may answer ``""`` for a file that does not exist."""
    sync_timeout_s: float
    """How long the client waits for ``session/new`` / ``session/load`` answers."""
    rejected_updates: frozenset[str] = frozenset()
    """``sessionUpdate`` tags of the schema the client answers with an error (it does
    not know them although it speaks the version that has them): never sent to it."""


#: What an unknown client gets: every precaution that keeps the connection working and
#: costs nothing with a client that follows the spec. Two fields are not precautions but
#: rendering facts and assume the spec: offering ``reject_always`` is harmless where it is
#: not shown (avante ignores it, CodeCompanion keys by kind), and mirroring tool output
#: elsewhere "in case" would duplicate it in every client that renders it.
CONSERVATIVE: Final = QuirkProfile(
    family="unknown",
    label="unknown client",
    drops_updates_before_session_response=True,  # Zed [V] z10, z4; JetBrains [I] j8
    replay_after_load_response_ok=False,  # spec: replay before the load response
    rejects_unknown_update_variants=True,  # Rust, TS and old Kotlin SDKs [V] s1, s3, j4
    answers_unknown_requests=False,  # CodeCompanion, avante never answer [V] cc2, av1
    offers_reject_always=True,  # see above: a rendering fact, not a precaution
    keys_options_by_kind=False,  # a rendering fact too: names tell options apart in the spec
    permission_requests_only_during_prompt=True,  # CodeCompanion [V] cc2
    cancelled_outcome_is_dismissal=True,  # VS Code ACP Client, acpx [V] vs1, x2
    shows_mode_updates=False,  # CodeCompanion ignores them [V] cc2-cc4
    reads_config_options=False,  # Toad, avante, marimo use legacy modes [V] t1, av1, m1
    renders_tool_content_blocks=True,  # see above: a rendering fact, not a precaution
    shows_first_content_only=False,  # a rendering fact too: Zed shows every diff [V] z2
    empty_read_may_mean_missing=True,  # CodeCompanion [V] cc2
    sync_timeout_s=20.0,  # the shortest known wait, CodeCompanion's [V] cc2
)

ZED: Final = replace(
    CONSERVATIVE,
    family="zed",
    label="Zed",
    drops_updates_before_session_response=True,  # registers the session after the answer [V] z10
    rejects_unknown_update_variants=True,  # Rust SDK enum without catch-all [V] s1, [L] s2
    shows_mode_updates=True,  # handle_session_update [V] z2
    reads_config_options=True,  # models only from configOptions since 1.18 [V] z2, [I] z7
)

JETBRAINS: Final = replace(
    CONSERVATIVE,
    family="jetbrains",
    label="JetBrains AI Assistant",
    drops_updates_before_session_response=True,  # suspected [I] j8
    rejects_unknown_update_variants=True,  # Kotlin SDK before Feb 2026 [V] j4
    shows_mode_updates=True,  # UI from modes / models / configOptions [I] j3
    reads_config_options=True,  # [I] j3
)

JETBRAINS_AIR: Final = replace(JETBRAINS, family="jetbrains-air", label="JetBrains AIR")

CODECOMPANION: Final = replace(
    CONSERVATIVE,
    family="codecompanion",
    label="CodeCompanion.nvim",
    rejects_unknown_update_variants=False,  # ignores unknown variants [V] cc2
    answers_unknown_requests=False,  # never answers unknown methods [V] cc2
    offers_reject_always=False,  # UI: allow_once, allow_always, reject_once [V] cc4
    keys_options_by_kind=True,  # options keyed and labelled by kind [V] cc4
    shows_first_content_only=True,  # its diff view reads content[1] only [V] cc4
    permission_requests_only_during_prompt=True,  # drops them outside a prompt [V] cc2
    shows_mode_updates=False,  # ignores current_mode_update [V] cc2
    reads_config_options=True,  # select options, model = category "model" [V] cc3
    empty_read_may_mean_missing=True,  # returns "" on ENOENT [V] cc2
    sync_timeout_s=20.0,  # waits 20 s for sync session/new and session/load [V] cc2
)

AGENT_SHELL: Final = replace(
    CONSERVATIVE,
    family="agent-shell",
    label="Emacs agent-shell",
    offers_reject_always=False,  # buttons y/n/! = allow_once/reject_once/allow_always [V] as1
    keys_options_by_kind=True,  # one button per kind [V] as1
)

ACPX: Final = replace(
    CONSERVATIVE,
    family="acpx",
    label="acpx (OpenClaw)",
    rejects_unknown_update_variants=True,  # TS SDK zod schemas [V] s3
    cancelled_outcome_is_dismissal=True,  # answers cancelled without a TTY [V] x2
    replay_after_load_response_ok=True,  # drains replay after the load answer [V] x2
)

VSCODE_ACP_CLIENT: Final = replace(
    CONSERVATIVE,
    family="vscode-acp-client",
    label='VS Code "ACP Client"',
    rejects_unknown_update_variants=True,  # TS SDK [V] s3
    cancelled_outcome_is_dismissal=True,  # cancelled on picker dismiss [V] vs1
)

VSCODE_ACP: Final = replace(
    CONSERVATIVE,
    family="vscode-acp",
    label="VS Code vscode-acp",
    rejects_unknown_update_variants=True,  # TS SDK [V] s3
)

OBSIDIAN: Final = replace(
    CONSERVATIVE,
    family="obsidian",
    label="Obsidian Agent Client",
    rejects_unknown_update_variants=True,  # TS SDK [V] s3
    shows_mode_updates=True,  # renders all 11 v1 variants [V] ob2
    reads_config_options=True,  # [V] ob2
    renders_tool_content_blocks=False,  # shows diff and terminal, not content [V] ob2
)

TOAD: Final = replace(
    CONSERVATIVE,
    family="toad",
    label="Toad",
    answers_unknown_requests=True,  # answers -32601 [V] t1
    shows_mode_updates=True,  # renders modes [V] t1
    reads_config_options=False,  # ignores config options [V] t1
    keys_options_by_kind=True,  # one hotkey per option kind: two "always" collide [L] 0.6.20
    # 0.6.20 answers these with {"id": null, "error": -32602} [L] (issue 14)
    rejected_updates=frozenset({"session_info_update", "config_option_update"}),
)


@dataclass(frozen=True, slots=True)
class KnownClient:
    """One row of the detection table: which ``clientInfo.name`` values mean this profile."""

    profile: QuirkProfile
    names: frozenset[str] = frozenset()
    """Exact names, casefolded."""
    prefixes: tuple[str, ...] = ()
    """Name prefixes, casefolded (``JetBrains.IntelliJ IDEA``, ``JetBrains.PyCharm``...)."""

    def matches(self, name: str) -> bool:
        key = name.strip().casefold()
        return key in self.names or key.startswith(self.prefixes)


#: Matched by ``clientInfo.name`` (sources: client-quirks.md §1). avante, marimo, Xcode and
#: the TS / Rust SDK examples send no ``clientInfo`` and get :data:`CONSERVATIVE`, which
#: covers their hazards; so does JetBrains 2025.3, which sent none either.
KNOWN_CLIENTS: Final[tuple[KnownClient, ...]] = (
    KnownClient(ZED, names=frozenset({"zed"})),  # [V] z1, z3
    KnownClient(JETBRAINS, prefixes=("jetbrains.",)),  # "JetBrains.IntelliJ IDEA" [L] j1
    KnownClient(CODECOMPANION, names=frozenset({"codecompanion.nvim"})),  # [V] cc1
    KnownClient(AGENT_SHELL, names=frozenset({"agent-shell"})),  # [V] as1
    KnownClient(ACPX, names=frozenset({"acpx"})),  # [V] x1
    KnownClient(VSCODE_ACP_CLIENT, names=frozenset({"vscode-acp-client"})),  # [V] vs1
    KnownClient(VSCODE_ACP, names=frozenset({"vscode-acp"})),  # [V] vs2
    KnownClient(OBSIDIAN, names=frozenset({"obsidian-agent-client"})),  # [V] ob1
    KnownClient(TOAD, names=frozenset({"toad"})),  # [V] t1
)

PROFILES: Final[Mapping[str, QuirkProfile]] = {
    p.family: p for p in (CONSERVATIVE, JETBRAINS_AIR, *(row.profile for row in KNOWN_CLIENTS))
}


@dataclass(frozen=True, slots=True)
class Identification:
    """The profile chosen for a connection and what it was recognised by."""

    profile: QuirkProfile
    detected_by: str | None
    """``clientInfo.name``, ``_meta.jetbrains.air``, or None for an unknown client."""


def identify(
    identity: ClientIdentity | None,
    signals: ClientSignals,
    table: tuple[KnownClient, ...] = KNOWN_CLIENTS,
) -> Identification:
    """Pick the quirk profile for a client; an unrecognised one gets :data:`CONSERVATIVE`."""
    # AIR declares itself in _meta (claude-agent-acp air-extension.ts [V] j5), whatever name
    # it sends, so it wins over a name match.
    if signals.air_capabilities is not None:
        return Identification(JETBRAINS_AIR, "_meta.jetbrains.air")
    if identity is not None:
        for row in table:
            if row.matches(identity.name):
                return Identification(row.profile, "clientInfo.name")
    return Identification(CONSERVATIVE, None)
