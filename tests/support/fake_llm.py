"""The loopback model server for tests: :mod:`acpwire.devtools.fake_llm` under its test name.

Runnable as a script too (``python tests/support/fake_llm.py --port N --script F.json``).
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "adapter"))

from acpwire.devtools.fake_llm import FakeLLM, Reply, last_user_text, load_script, main

__all__ = ["FakeLLM", "Reply", "last_user_text", "load_script", "main"]

if __name__ == "__main__":
    main()
