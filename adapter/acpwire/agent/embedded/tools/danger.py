"""Which shell commands need the user's explicit approval, and why.

A table of patterns, each with the reason shown to the user. It is a safety net for
honest mistakes, not a sandbox: a determined command can always evade patterns.
"""

from __future__ import annotations

import re

_RULES: tuple[tuple[str, str], ...] = (
    # Options may follow the file names (GNU rm): any -r/-R/--recursive in the command.
    (r"\brm\b[^;&|]*\s(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)\b", "recursive delete"),
    (r"\bfind\b.*\s-delete\b", "find with -delete"),
    (r"\bmkfs(?:\.\w+)?\b", "format a filesystem"),
    (r"\bdd\b.*\bof=/dev/", "raw write to a device"),
    (r">\s*/dev/(?:sd|nvme|hd|vd|disk)", "overwrite a disk device"),
    (
        r"\bchmod\b(?=.*(?:\s-[a-zA-Z]*R|--recursive))(?=.*\b[0-7]?777\b)",
        "recursive world-writable permissions",
    ),
    (r"\bchown\b.*(?:\s-[a-zA-Z]*R\b|--recursive)", "recursive ownership change"),
    (r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:", "fork bomb"),
    (
        r"\b(?:curl|wget)\b[^|]*\|\s*(?:sudo\s+)?(?:env\s+)?(?:\S*/)?(?:ba|z|da|k)?sh\b",
        "pipe a download into a shell",
    ),
    (
        r"(?:\b(?:ba|z|da|k)?sh|\bsource)\b[^|;&]*(?:<|\$)\(\s*(?:curl|wget)\b",
        "run a download as a shell script",
    ),
    (
        # Global options may sit between git and push; a +refspec forces too.
        r"\bgit(?:\s+-\S+(?:\s+[^-\s]\S*)?)*\s+push\b"
        r".*(?:--force\b|--force-with-lease\b|\s-[a-zA-Z]*f\b|\s\+\S)",
        "force push",
    ),
    (r"\bgit\s+reset\s+--hard\b", "discard uncommitted changes (git reset --hard)"),
    (r"\bgit\s+clean\s+(?:-\S+\s+)*-[a-zA-Z]*f", "delete untracked files (git clean)"),
    (r"\b(?:shutdown|reboot|poweroff|halt)\b", "shutdown or reboot"),
    (r"(?:>>?|\btee\b(?:\s+-a)?)\s*/etc/", "write to /etc"),
    (r"\b(?:cp|mv|sed\s+-i\S*|install|ln)\b.*\s/etc/", "modify files in /etc"),
    (
        # What the edit tools always ask about, written by the shell instead.
        r"(?:>>?|\btee\b(?:\s+-a)?)\s*[\"']?\S*(?:\.git|\.ssh)/"
        r"|(?:>>?|\btee\b(?:\s+-a)?)\s*[\"']?\S*\.env(?:rc|[._-]\S*)?(?:\s|$|[\"';&|])"
        r"|\b(?:cp|mv|ln|install|sed\s+-i\S*)\b[^;&|]*(?:\.git|\.ssh)/",
        "write to a sensitive path (.git, .ssh, .env)",
    ),
    (r"\bsudo\b|\bdoas\b|\bsu\s+-", "run as root"),
    (
        r"\bkill\s+-(?:9|KILL)\s+-1\b|\bkillall\b|\bpkill\b",
        "kill processes by name or all processes",
    ),
    (r"\bcrontab\s+-r\b", "delete the crontab"),
    (r"\b(?:DROP|TRUNCATE)\s+(?:TABLE|DATABASE|SCHEMA)\b", "drop database objects"),
)

DANGEROUS_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), reason) for pattern, reason in _RULES
)


def dangerous_reason(command: str) -> str | None:
    """The reason ``command`` needs approval, or None when it looks harmless."""
    for pattern, reason in DANGEROUS_PATTERNS:
        if pattern.search(command):
            return reason
    return None
