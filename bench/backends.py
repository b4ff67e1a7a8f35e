"""The two backends of part B, configured offline against the same loopback model.

* acpwire: the ``acpwire`` console script of this virtualenv (what an editor launches;
  ``python -m acpwire`` where there is none) with ``$ACPWIRE_HOME/config.toml`` naming
  the model server, the model and a context window. Its sources are compiled to
  bytecode first (:func:`compile_acpwire`), as ``pip install`` does for Hermes: an
  editable install under ``PYTHONDONTWRITEBYTECODE`` would otherwise compile every
  module on every start.
* Hermes: ``hermes-acp`` 0.19.0 from its own virtualenv (``bench/.venvs/hermes``, created
  on first use), with ``$HERMES_HOME/config.yaml`` selecting the ``custom`` provider (see
  the Hermes reference §5.4). Lazy installs are disabled and outbound HTTP(S) goes to a
  dead loopback proxy, so metadata look-ups on the internet fail at once instead of
  waiting on DNS; the loopback model is exempt.
"""

from __future__ import annotations

import compileall
import logging
import subprocess
import sys
from pathlib import Path

import acp_v1
import acpwire

from .client import Launch, child_env
from .results import REPO

log = logging.getLogger(__name__)

HERMES_SPEC = "hermes-agent[acp]==0.19.0"
HERMES_VERSION = "0.19.0"
HERMES_VENV = REPO / "bench" / ".venvs" / "hermes"
HERMES_BIN = HERMES_VENV / "bin" / "hermes-acp"
MODEL = "bench-model"
API_KEY = "sk-bench-local"
CONTEXT = 131_072
DEAD_PROXY = "http://127.0.0.1:9"
INSTALL_TIMEOUT = 900


def hermes_installed() -> bool:
    if not HERMES_BIN.exists():
        return False
    done = subprocess.run(
        [str(HERMES_BIN), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    return done.returncode == 0 and done.stdout.strip() == HERMES_VERSION


def ensure_hermes() -> str | None:
    """Install Hermes into its virtualenv unless present; None when ready, else why not."""
    if hermes_installed():
        return None
    log.info("installing %s into %s (about 230 MB, 30 s)", HERMES_SPEC, HERMES_VENV)
    steps = [
        ["python3", "-m", "venv", "--clear", str(HERMES_VENV)],
        [str(HERMES_VENV / "bin" / "pip"), "install", "--quiet", HERMES_SPEC],
    ]
    for step in steps:
        try:
            done = subprocess.run(
                step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"`{' '.join(step)}` failed: {exc}"
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            return f"`{' '.join(step)}` exited {done.returncode}: {' / '.join(tail)}"
    if not hermes_installed():
        return f"{HERMES_BIN} --version does not print {HERMES_VERSION} after the install"
    return None


def compile_acpwire() -> None:
    """Write the bytecode of acpwire's own packages (``acpwire``, ``acp_v1``), as a
    wheel install does; up-to-date files are left alone."""
    for package in (acpwire, acp_v1):
        assert package.__file__ is not None
        folder = Path(package.__file__).parent
        if not compileall.compile_dir(folder, quiet=1):
            raise RuntimeError(f"cannot compile {folder}")


def acpwire_argv() -> list[str]:
    """The ``acpwire`` console script beside this Python, else ``python -m acpwire``."""
    script = Path(sys.executable).with_name("acpwire")
    return [str(script)] if script.exists() else [sys.executable, "-m", "acpwire"]


def acpwire_launch(
    home: Path, base_url: str | None, *, model: str | None = MODEL, context: bool = True
) -> Launch:
    """acpwire with a config home; ``base_url`` / ``model`` None leave them to be looked
    up (local discovery, the first model listed); ``context`` False leaves the context
    window to the endpoint."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        "[model]\n"
        + (f'base_url = "{base_url}"\n' if base_url else "")
        + (f'model = "{model}"\n' if model else "")
        + f'api_key = "{API_KEY}"\n'
        + (f"context_window = {CONTEXT}\n" if context else "")
        + "\n[backend]\n"
        'log_level = "WARNING"\n',
        encoding="utf-8",
    )
    return Launch(acpwire_argv(), child_env({"ACPWIRE_HOME": str(home)}))


def hermes_launch(home: Path, base_url: str) -> Launch:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        "model:\n"
        "  provider: custom\n"
        f"  base_url: {base_url}\n"
        f"  default: {MODEL}\n"
        f"  api_key: {API_KEY}\n",
        encoding="utf-8",
    )
    env = child_env(
        {
            "HERMES_HOME": str(home),
            "HERMES_DISABLE_LAZY_INSTALLS": "1",
            "HTTP_PROXY": DEAD_PROXY,
            "HTTPS_PROXY": DEAD_PROXY,
            "http_proxy": DEAD_PROXY,
            "https_proxy": DEAD_PROXY,
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
    )
    return Launch([str(HERMES_BIN)], env)
