"""Approval policy for the ACP backend: which edits and commands need the user, what to offer,
how to read the answer and what to remember.

Pure policy and data: the permission requests themselves are sent by the backend.
"""

from acpwire.approval.commands import command_text, command_title, memory_key
from acpwire.approval.memory import (
    ApprovalMemory,
    ApprovalStore,
    CommandVerdict,
    PersistentDecision,
    RecordScope,
    StoredApproval,
    command_key,
)
from acpwire.approval.messages import Subject, refusal_message, remembered_deny_message
from acpwire.approval.permissions import (
    ALLOWING,
    TIMED_OUT,
    Decision,
    OptionId,
    build_command_options,
    build_edit_options,
    interpret_outcome,
    is_allowed,
    to_seam_answer,
)
from acpwire.approval.policy import (
    MODE_POLICIES,
    EditBatchDecision,
    EditDecision,
    EditPolicy,
    decide_edit,
    decide_edits,
    hard_link_count,
    policy_for_mode,
)
from acpwire.approval.protected import (
    config_homes,
    git_dirs,
    is_sensitive,
    protected_dirs,
    protected_reason,
)

__all__ = [
    "ALLOWING",
    "MODE_POLICIES",
    "TIMED_OUT",
    "ApprovalMemory",
    "ApprovalStore",
    "CommandVerdict",
    "Decision",
    "EditBatchDecision",
    "EditDecision",
    "EditPolicy",
    "OptionId",
    "PersistentDecision",
    "RecordScope",
    "StoredApproval",
    "Subject",
    "build_command_options",
    "build_edit_options",
    "command_key",
    "command_text",
    "command_title",
    "config_homes",
    "decide_edit",
    "decide_edits",
    "git_dirs",
    "hard_link_count",
    "interpret_outcome",
    "is_allowed",
    "is_sensitive",
    "memory_key",
    "policy_for_mode",
    "protected_dirs",
    "protected_reason",
    "refusal_message",
    "remembered_deny_message",
    "to_seam_answer",
]
