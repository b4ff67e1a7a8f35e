"""The environment a command or an MCP server process gets: acpwire's secrets left out.

Removed: every variable named in :class:`SecretSpec` (``OPENAI_API_KEY``, whatever the
config home's ``.env`` defined), every variable whose value is a configured secret (the
``api_key`` of config.toml under any name), every variable whose name looks like a
credential (a ``_``-separated part such as ``KEY``, ``TOKEN``, ``SECRET``, ``PASSWORD``,
``AUTH``, ``CREDENTIALS``...), and the variables that make ``bash`` run code before the
command (``BASH_ENV``, ``ENV``, exported ``BASH_FUNC_*`` functions). Names the user lists
in ``[backend] env_passthrough`` are kept whatever they look like. The same rule, with
the same list (:func:`secret_spec`), makes the environment of shell commands and of the
MCP servers acpwire starts.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from acpwire.config.secret_names import looks_secret

if TYPE_CHECKING:
    from acpwire.config.settings import Settings

__all__ = [
    "ALWAYS_SECRET",
    "SecretSpec",
    "command_env",
    "looks_secret",
    "scrubbed_env",
    "secret_spec",
]

ALWAYS_SECRET: Final = frozenset({"OPENAI_API_KEY"})
"""acpwire's own credential variable (removed even when listed to pass through)."""
_SHELL_STARTUP: Final = frozenset({"BASH_ENV", "ENV"})


@dataclass(frozen=True, slots=True)
class SecretSpec:
    """What counts as acpwire's secrets, and what the user lets through anyway."""

    names: frozenset[str] = frozenset()
    values: frozenset[str] = frozenset()
    passthrough: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls, names: Iterable[str] = (), values: Iterable[str] = (), passthrough: Iterable[str] = ()
    ) -> SecretSpec:
        return cls(
            frozenset(names) | ALWAYS_SECRET,
            frozenset(v for v in values if v),
            frozenset(passthrough),
        )


def _dropped(name: str, value: str, spec: SecretSpec) -> bool:
    if name in _SHELL_STARTUP or name.startswith("BASH_FUNC_"):
        return True
    if name in ALWAYS_SECRET or value in spec.values:
        return True  # acpwire's own key, under any name: never passed on
    if name in spec.passthrough:
        return False
    return name in spec.names or looks_secret(name)


def scrubbed_env(
    spec: SecretSpec | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``environ`` (default: this process's) without acpwire's secrets and look-alikes."""
    spec = SecretSpec.of() if spec is None else spec
    source = os.environ if environ is None else environ
    return {name: value for name, value in source.items() if not _dropped(name, value, spec)}


def command_env(
    spec: SecretSpec | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """:func:`scrubbed_env` for a shell command: no pager, a dumb terminal."""
    return {**scrubbed_env(spec, environ), "PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb"}


def secret_spec(settings: Settings) -> SecretSpec:
    """What :func:`scrubbed_env` removes for these settings: ``OPENAI_API_KEY``, the names
    the config home's ``.env`` defined, the configured ``api_key`` under any name; and
    what it keeps anyway (``env_passthrough``)."""
    api_key = settings.file_values.get("api_key")
    return SecretSpec.of(
        names=settings.secret_names,
        values=[api_key] if isinstance(api_key, str) else [],
        passthrough=settings.env_passthrough,
    )
