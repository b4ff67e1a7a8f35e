"""Agent events and stored history as typed ACP ``session/update`` payloads.

Pure functions from the agent seam (:class:`~acpwire.agent.seam.ToolStart`,
:class:`~acpwire.agent.seam.ToolEnd`, todo items, chat messages) to the generated
``acp_v1.models`` classes; sending them is the backend's job.
"""

from acpwire.render._content import diff_content, text_content
from acpwire.render._titles import tool_title
from acpwire.render.plan import CANCELLED_PREFIX, plan_from_todo_result, plan_update
from acpwire.render.replay import (
    NO_RESULT,
    SUMMARY_KEY,
    SUMMARY_NOTE,
    ReplayUpdate,
    content_text,
    replay_updates,
)
from acpwire.render.text import coerce_args, fence, truncate
from acpwire.render.tools import (
    POLISHED_TOOLS,
    TOOL_KIND_MAP,
    end_update,
    start_update,
    terminal_content,
    tool_kind,
    tool_locations,
)

__all__ = [
    "CANCELLED_PREFIX",
    "NO_RESULT",
    "POLISHED_TOOLS",
    "SUMMARY_KEY",
    "SUMMARY_NOTE",
    "TOOL_KIND_MAP",
    "ReplayUpdate",
    "coerce_args",
    "content_text",
    "diff_content",
    "end_update",
    "fence",
    "plan_from_todo_result",
    "plan_update",
    "replay_updates",
    "start_update",
    "terminal_content",
    "text_content",
    "tool_kind",
    "tool_locations",
    "tool_title",
    "truncate",
]
