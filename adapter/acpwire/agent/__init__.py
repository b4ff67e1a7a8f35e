"""The synchronous agent seam and the embedded default agent.

This package speaks OpenAI chat messages and the :mod:`acpwire.agent.seam` contract; it
knows nothing of ACP. May import: stdlib, httpx, ``acpwire.agent``.
"""

from __future__ import annotations

from acpwire.agent.cancel import CancelToken
from acpwire.agent.config import (
    AgentConfig,
    ConfigError,
    complete_config,
    discover_local_server,
    pick_default_model,
    resolve_config,
)
from acpwire.agent.default import DefaultAgent
from acpwire.agent.llm import ChatClient, list_models
from acpwire.agent.stream import ModelCancelled, ModelError, ModelReply, ToolCall
from acpwire.agent.tools import CommandRunner, LocalRunner, ToolOutcome, ToolRegistry, default_tools

__all__ = [
    "AgentConfig",
    "CancelToken",
    "ChatClient",
    "CommandRunner",
    "ConfigError",
    "DefaultAgent",
    "LocalRunner",
    "ModelCancelled",
    "ModelError",
    "ModelReply",
    "ToolCall",
    "ToolOutcome",
    "ToolRegistry",
    "complete_config",
    "default_tools",
    "discover_local_server",
    "list_models",
    "pick_default_model",
    "resolve_config",
]
