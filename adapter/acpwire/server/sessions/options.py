"""Session modes and config options: what the editor's pickers show and how to apply a choice.

Three select options, each with its protocol category: ``model`` (category ``model``),
``mode`` (category ``mode``, the same choice as the session modes, which set the edit
approval policy) and ``reasoning_effort`` (category ``thought_level``). Clients that
read ``configOptions`` (Zed >= 1.18) show them; older ones use ``modes``.
"""

from __future__ import annotations

from dataclasses import dataclass

from acp_v1 import models as m
from acpwire.rpc import invalid_params
from acpwire.server.sessions.state import MODES, SessionState

MODEL = "model"
MODE = "mode"
EFFORT = "reasoning_effort"
LEGACY_EDIT_POLICY = "edit_approval_policy"
LEGACY_EDIT_POLICIES: dict[str, str] = {
    "ask": "default",
    "workspace_session": "accept_edits",
    "session": "dont_ask",
}
"""hermes-acp's ``edit_approval_policy`` config id (never advertised there either) and the
modes its values mean, for clients scripted against it."""
EFFORTS: dict[str, str] = {
    "default": "Model default",
    "low": "Low",
    "medium": "Medium",
    "high": "High",
}


def mode_state(state: SessionState) -> m.SessionModeState:
    return m.SessionModeState(
        current_mode_id=state.mode,
        available_modes=[
            m.SessionMode(id=mid, name=name, description=desc)
            for mid, (name, desc) in MODES.items()
        ],
    )


def _select(
    config_id: str,
    name: str,
    category: m.KnownSessionConfigOptionCategory,
    current: str,
    choices: list[tuple[str, str]],
    description: str,
) -> m.SessionConfigOptionSelect:
    return m.SessionConfigOptionSelect(
        id=config_id,
        name=name,
        category=category,
        description=description,
        current_value=current,
        options=[m.SessionConfigSelectOption(value=value, name=label) for value, label in choices],
    )


def config_options(state: SessionState, models: list[str]) -> list[m.SessionConfigOption]:
    """The full list of config options with their current values."""
    current_model = state.agent.model
    model_ids = [current_model, *(x for x in models if x != current_model)]
    return [
        _select(
            MODEL,
            "Model",
            "model",
            current_model,
            [(x, x) for x in model_ids],
            "The model answering in this session.",
        ),
        _select(
            MODE,
            "Mode",
            "mode",
            state.mode,
            [(mid, name) for mid, (name, _) in MODES.items()],
            "When to ask before editing files, and whether commands run in the sandbox.",
        ),
        _select(
            EFFORT,
            "Reasoning effort",
            "thought_level",
            state.reasoning_effort,
            list(EFFORTS.items()),
            "How hard reasoning models think before answering.",
        ),
    ]


@dataclass(frozen=True, slots=True)
class Change:
    """What a set_config_option or set_mode request changes."""

    config_id: str
    value: str


def parse_change(
    params: m.SetSessionConfigOptionRequest,
    models: list[str],
    current_model: str,
    *,
    any_model: bool = False,
) -> Change:
    """Validate a config change; unknown ids or values are ``-32602``."""
    if isinstance(params, m.SetSessionConfigOptionRequestBoolean):
        raise invalid_params(f"config option {params.config_id!r} is not a boolean option")
    if params.config_id == LEGACY_EDIT_POLICY:
        mode = LEGACY_EDIT_POLICIES.get(params.value)
        if mode is None:
            choices = ", ".join(LEGACY_EDIT_POLICIES)
            raise invalid_params(
                f"unknown value {params.value!r} for {LEGACY_EDIT_POLICY}: {choices}"
            )
        return Change(MODE, mode)
    return check_change(params.config_id, params.value, models, current_model, any_model=any_model)


def check_change(
    config_id: str, value: str, models: list[str], current_model: str, *, any_model: bool = False
) -> Change:
    """``config_id`` set to ``value``, if both are known; else ``-32602``. With
    ``any_model`` (the factory's ``any_model_id``) every non-blank model id passes here,
    as for ``/model``; the agent's ``set_model`` refuses the ones it cannot use."""
    if config_id == MODEL and any_model and value.strip():
        return Change(config_id, value.strip())
    allowed: dict[str, set[str]] = {
        MODEL: {current_model, *models},
        MODE: set(MODES),
        EFFORT: set(EFFORTS),
    }
    if config_id not in allowed:
        raise invalid_params(
            f"unknown config option {config_id!r}; known: {', '.join(sorted(allowed))}"
        )
    if value not in allowed[config_id]:
        choices = ", ".join(sorted(allowed[config_id]))
        raise invalid_params(
            f"unknown value {value!r} for config option {config_id!r}; choose one of: {choices}"
        )
    return Change(config_id, value)


def check_mode(mode_id: str) -> str:
    if mode_id not in MODES:
        raise invalid_params(f"unknown mode {mode_id!r}; known modes: {', '.join(MODES)}")
    return mode_id


def _own_property(agent: object, name: str) -> str | None:
    """A property the agent's class itself defines (Hermes' ``provider``...), read without
    building a lazily built agent just to ask it; None where there is none."""
    if isinstance(getattr(type(agent), name, None), property):
        return str(getattr(agent, name, ""))
    return None


def stored_model(agent: object) -> str:
    """The model a session stores: the agent's ``model_choice`` where it has one (Hermes:
    ``provider:model`` after a move to another provider), else its model."""
    return _own_property(agent, "model_choice") or str(getattr(agent, "model", ""))


def agent_provider(agent: object, fallback: str) -> str:
    """The session's provider where the agent has its own (Hermes), else ``fallback``."""
    return _own_property(agent, "provider") or fallback
