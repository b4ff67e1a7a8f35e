"""Real third-party ACP agents: installed in venvs of their own, launched offline against a
loopback OpenAI-compatible model, run behind ``acpwire tap`` through a scripted session.

Each agent is an :class:`Agent`: what to install (``bench/.venvs/<name>``, git-ignored) and
a ``launch(root, base_url)`` function that writes the agent's own config under ``root`` (its
HOME, XDG dirs and config files: never the user's) and returns a :class:`Launch`: the argv,
the environment and the files it wrote. That function is what a conformance run needs; until
``acpwire check`` replaces it, :func:`scripted_session` plays an editor's session against it
(``initialize``, ``session/new``, one prompt) behind the tap. docs/AGENTS.md says what was
found per agent.

    python -m bench.agents.real [--install] [--only NAME ...] [--out bench/results/agents]

Every agent runs with the network closed but for the loopback: a dead proxy
(``http://127.0.0.1:9``) with ``NO_PROXY=127.0.0.1,localhost``, so any other look-up fails
at once instead of waiting.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

REPO = Path(__file__).resolve().parents[2]
VENVS = REPO / "bench" / ".venvs"
RESULTS = REPO / "bench" / "results" / "agents"
ACPWIRE = REPO / ".venv" / "bin" / "acpwire"
DEAD_PROXY = "http://127.0.0.1:9"
MODEL = "bench-model"
API_KEY = "sk-test-local"
"""The dummy key every agent is given (the loopback model accepts anything)."""
PYTHON312 = VENVS / "_python3.13" / "bin" / "python3.13"
"""The interpreter for agents that need Python >= 3.12 (``make agents-python`` builds it
from Debian's source package; ``ACPWIRE_AGENTS_PYTHON`` names another)."""
PYENV_VERSIONS = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
"""Where pyenv keeps its Pythons (this machine's image has 3.12.1 there, off PATH)."""
STEP_S = 120.0
"""The most one request of the scripted session may take (first starts are slow)."""

JsonObject: TypeAlias = dict[str, Any]


@dataclass
class Launch:
    """How to start one agent: what a conformance run needs."""

    argv: list[str]
    env: dict[str, str]
    files: dict[str, str] = field(default_factory=dict)
    """Path -> content of each config file written for this launch."""
    cwd: Path | None = None
    work: Path | None = None
    """The directory the session runs in (``session/new``'s cwd)."""


@dataclass
class Turn:
    """The prompt of the scripted session and the model's scripted replies to it."""

    prompt: str
    rules: list[JsonObject]
    script: list[JsonObject] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    """Files put in the session's work dir before the prompt."""


@dataclass
class Agent:
    name: str
    requirements: list[str]
    launch: Callable[[Path, str], Launch]
    turn: Turn
    python: str = "3.11"
    """The lowest Python the package declares (``Requires-Python``)."""
    max_python: str | None = None
    """A Python the package refuses at or above (``Requires-Python``'s upper bound)."""
    blocked: str = ""
    """Why this agent cannot run here at all, found by trying (empty: it can)."""
    substitute: dict[str, str] = field(default_factory=dict)
    """A pinned dependency that cannot be installed -> what is installed instead (the
    package goes in ``--no-deps``, then its declared dependencies with these replaced)."""
    venv_name: str = ""
    """The venv's folder under bench/.venvs (default: the agent's name)."""
    make_target: str = "check-agents"
    """The make target that installs it."""

    @property
    def venv(self) -> Path:
        return VENVS / (self.venv_name or self.name)

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)

    @property
    def python_range(self) -> str:
        return f">={self.python}" + (f",<{self.max_python}" if self.max_python else "")

    def missing(self) -> str | None:
        """Why this agent cannot run here, or None."""
        if self.blocked:
            return self.blocked
        if not (self.venv / "bin" / "python").exists():
            needs = "" if self.python == "3.11" else f"; it needs Python {self.python_range}"
            return (
                f"{self.name} is not installed: {self.venv} is missing"
                f" (`make {self.make_target}` builds it{needs})"
            )
        return None


def offline_env(root: Path, **extra: str) -> dict[str, str]:
    """An environment of the agent's own: HOME and the XDG dirs under ``root``, no variable
    of the developer's shell but PATH, and no network but the loopback."""
    home = root / "home"
    dirs = {
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_DATA_HOME": home / ".local" / "share",
        "XDG_STATE_HOME": home / ".local" / "state",
        "XDG_CACHE_HOME": home / ".cache",
    }
    for path in (home, *dirs.values()):
        path.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        **{key: str(path) for key, path in dirs.items()},
        "HTTP_PROXY": DEAD_PROXY,
        "HTTPS_PROXY": DEAD_PROXY,
        "ALL_PROXY": DEAD_PROXY,
        "http_proxy": DEAD_PROXY,
        "https_proxy": DEAD_PROXY,
        "all_proxy": DEAD_PROXY,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    env.update(extra)
    return env


def write_files(files: Mapping[Path, str]) -> dict[str, str]:
    written: dict[str, str] = {}
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written[str(path)] = text
    return written


def _work(root: Path) -> Path:
    work = root / "work"
    work.mkdir(parents=True, exist_ok=True)
    return work.resolve()


# One launch function per agent. Each was found by reading the package's code in its venv;
# docs/AGENTS.md cites the files.


def launch_hermes(root: Path, base_url: str) -> Launch:
    """``hermes-acp`` (hermes-agent 0.19.0, ``acp_adapter.entry:main``): its model from
    ``$HERMES_HOME/config.yaml`` (provider ``custom``), as tests/hermes/hermes_rig.py does."""
    hermes_home = root / "hermes-home"
    files = write_files(
        {
            hermes_home / "config.yaml": (
                f"model:\n  provider: custom\n  base_url: {base_url}\n  default: {MODEL}\n"
                f"  api_key: {API_KEY}\n"
            )
        }
    )
    env = offline_env(
        root,
        HERMES_HOME=str(hermes_home),
        HERMES_DISABLE_LAZY_INSTALLS="1",  # no pip installs from inside the agent
    )
    return Launch([AGENTS["hermes"].bin("hermes-acp")], env, files, work=_work(root))


def launch_gptme(root: Path, base_url: str) -> Launch:
    """``gptme-acp`` (``gptme.acp.__main__:main``): provider ``local`` reads
    ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` (gptme/llm/llm_openai.py), the model
    ``GPTME_MODEL`` (gptme/config/core.py ``resolve_model_source``); its config and logs go
    to the XDG dirs; ``GPTME_NO_LOCAL_DISCOVERY`` stops it probing local model servers."""
    env = offline_env(
        root,
        GPTME_MODEL=f"local/{MODEL}",
        OPENAI_BASE_URL=base_url,
        OPENAI_API_KEY=API_KEY,
        GPTME_NO_LOCAL_DISCOVERY="1",
    )
    return Launch([AGENTS["gptme"].bin("gptme-acp")], env, work=_work(root))


def launch_fast_agent(root: Path, base_url: str) -> Launch:
    """``fast-agent-acp`` (fast-agent-mcp, ``fast_agent.cli.commands.acp:main``): the
    ``generic`` provider (any OpenAI-compatible endpoint: fast_agent/config.py
    ``GenericSettings``) from ``fastagent.config.yaml`` in the launch directory."""
    config = root / "launch" / "fastagent.config.yaml"
    files = write_files(
        {
            config: (
                f"default_model: generic.{MODEL}\n"
                f"generic:\n  api_key: {API_KEY}\n  base_url: {base_url}\n"
                "logger:\n  type: none\n  progress_display: false\n  show_chat: false\n"
                "  show_tools: false\n"
            )
        }
    )
    env = offline_env(root, GENERIC_API_KEY=API_KEY, GENERIC_BASE_URL=base_url)
    # --shell: its local shell tool, `bash` (fast_agent/cli/shared_options.py); it runs in
    # the process's cwd, not the session's (docs/AGENTS.md).
    argv = [AGENTS["fast-agent"].bin("fast-agent-acp"), "--config-path", str(config), "--shell"]
    return Launch(argv, env, files, cwd=config.parent, work=_work(root))


def launch_mistral_vibe(root: Path, base_url: str) -> Launch:
    """``vibe-acp`` (mistral-vibe, ``vibe.acp.entrypoint:main``): a provider and a model of
    its own in ``$VIBE_HOME/config.toml`` (vibe/core/config/models.py ``ProviderConfig``,
    ``ModelConfig``), telemetry off."""
    vibe_home = root / "vibe-home"
    files = write_files(
        {
            vibe_home / "config.toml": (
                f'active_model = "{MODEL}"\n'
                "enable_telemetry = false\n\n"
                "[[providers]]\n"
                'name = "loopback"\n'
                f'api_base = "{base_url}"\n'
                'api_key_env_var = "LOOPBACK_API_KEY"\n'
                'backend = "generic"\n\n'
                "[[models]]\n"
                f'name = "{MODEL}"\n'
                'provider = "loopback"\n'
                f'alias = "{MODEL}"\n'
            )
        }
    )
    env = offline_env(root, VIBE_HOME=str(vibe_home), LOOPBACK_API_KEY=API_KEY)
    return Launch([AGENTS["mistral-vibe"].bin("vibe-acp")], env, files, work=_work(root))


def launch_kimi(root: Path, base_url: str) -> Launch:
    """``kimi acp`` (kimi-cli, ``kimi_cli.cli:acp`` -> ``kimi_cli.acp.acp_main``): an
    ``openai_legacy`` provider and a model in ``$KIMI_SHARE_DIR/config.toml``
    (kimi_cli/share.py, kimi_cli/config.py ``LLMProvider`` / ``LLMModel``)."""
    share = root / "kimi-share"
    files = write_files(
        {
            share / "config.toml": (
                f'default_model = "{MODEL}"\n\n'
                f'[models."{MODEL}"]\n'
                'provider = "loopback"\n'
                f'model = "{MODEL}"\n'
                "max_context_size = 131072\n\n"
                "[providers.loopback]\n"
                'type = "openai_legacy"\n'
                f'base_url = "{base_url}"\n'
                f'api_key = "{API_KEY}"\n'
            ),
            # kimi's ACP server refuses session/new ("Authentication required") without a
            # Kimi Code OAuth token on file, whatever model is configured
            # (kimi_cli/acp/server.py `_check_auth`); a dummy one with no expiry passes
            # (kimi_cli/auth/oauth.py `load_tokens`, `OAuthToken.from_dict`).
            share / "credentials" / "kimi-code.json": json.dumps(
                {"access_token": "dummy-local", "refresh_token": "", "expires_at": 0}
            ),
        }
    )
    env = offline_env(root, KIMI_SHARE_DIR=str(share))
    # Not `kimi acp`: 1.52.0's entry point (kimi_cli/__main__.py `_deprecation_gate`) only
    # prints a deprecation notice on stdout and exits. The Typer CLI behind it is still
    # there, and kimi's own Toad launcher starts it so (kimi_cli/cli/toad.py).
    argv = [AGENTS["kimi"].bin("python"), "-m", "kimi_cli.cli", "acp"]
    return Launch(argv, env, files, work=_work(root))


def launch_kimi_entry_point(root: Path, base_url: str) -> Launch:
    """kimi-cli's documented ACP command, ``kimi acp``, configured as :func:`launch_kimi`:
    1.52.0 answers it with a deprecation notice on stdout (docs/AGENTS.md)."""
    launch = launch_kimi(root, base_url)
    launch.argv = [AGENTS["kimi"].bin("kimi"), "acp"]
    return launch


def launch_openhands(root: Path, base_url: str) -> Launch:
    """``openhands acp`` (``openhands_cli.entrypoint:main``, argparsers/acp_parser.py): its
    agent, LLM included, from ``$OPENHANDS_PERSISTENCE_DIR/agent_settings.json``
    (locations.py, stores/agent_store.py ``load_from_disk``: ``Agent.model_validate_json``).
    ACP mode reads no ``LLM_*`` variables: ``run_acp_server`` is not given
    ``--override-with-envs`` (entrypoint.py), and without that file ``session/new`` answers
    "Authentication required" (acp_impl/agent/local_agent.py ``_is_authenticated``)."""
    state = root / "openhands-state"
    # The fields the SDK's `LLM` needs; the rest of the `Agent` (tools, context, condenser)
    # openhands adds at load (stores/agent_store.py `_apply_runtime_config`).
    llm = {"model": f"openai/{MODEL}", "base_url": base_url, "api_key": API_KEY}
    files = write_files(
        {state / "agent_settings.json": json.dumps({"llm": {**llm, "usage_id": "agent"}})}
    )
    env = offline_env(root, OPENHANDS_PERSISTENCE_DIR=str(state), OPENHANDS_SUPPRESS_BANNER="1")
    argv = [AGENTS["openhands"].bin("openhands"), "acp"]
    return Launch(argv, env, files, work=_work(root))


def _tool_turn(call: JsonObject) -> Turn:
    """A prompt whose model reply is one OpenAI tool call, then a sentence."""
    return Turn(
        prompt="Read notes.txt and tell me what it says.",
        rules=[{"match": "notes.txt", "times": 1, "tool_calls": [call], "usage": USAGE}],
        script=[{"text": "The notes say hello.", "usage": USAGE}],
        files={"notes.txt": "hello from the notes\n"},
    )


USAGE = {"prompt_tokens": 12, "completion_tokens": 3}
"""Token usage on every scripted reply (mistral-vibe refuses a stream without it)."""

TEXT_TURN = Turn(
    prompt="Say hello.", rules=[{"match": "hello", "text": "Hello, editor.", "usage": USAGE}]
)

AGENTS: dict[str, Agent] = {
    agent.name: agent
    for agent in (
        Agent(
            "hermes",
            # As `make hermes-venv` builds it: with this checkout, for tests/hermes too.
            ["hermes-agent[acp]==0.19.0", "-e", f"{REPO}[backend]"],
            launch_hermes,
            _tool_turn({"id": "call-1", "name": "read_file", "arguments": {"path": "notes.txt"}}),
            venv_name="hermes-acpwire",
            make_target="hermes-venv",
        ),
        Agent(
            "gptme",
            ["gptme-acp==0.35.1", "gptme[acp]==0.35.1"],
            launch_gptme,
            # gptme's tools are markdown blocks in the reply (tool_format="markdown" in
            # gptme/acp/agent.py): a shell block (a command off its allowlist, so that it
            # asks permission), then a sentence after the tool result.
            Turn(
                prompt="Write made.txt, please.",
                rules=[
                    {
                        "match": "made.txt",
                        "times": 1,
                        "text": "```shell\necho made > made.txt\n```",
                        "usage": USAGE,
                    }
                ],
                script=[{"text": "Done: made.txt is written.", "usage": USAGE}],
            ),
            make_target="gptme-venv",
        ),
        Agent(
            "fast-agent",
            ["fast-agent-mcp==0.10.48"],
            launch_fast_agent,
            _tool_turn({"id": "call-1", "name": "bash", "arguments": {"command": "cat notes.txt"}}),
            python="3.12",
            max_python="3.16",
        ),
        Agent(
            "mistral-vibe",
            ["mistral-vibe==3.0.3"],
            launch_mistral_vibe,
            TEXT_TURN,
            python="3.12",
            # mistral-vibe 3.0.3 pins certifi==2026.10.19, a release PyPI does not have
            # (only 2026.10.19.post1): as declared, it cannot be installed.
            substitute={"certifi==2026.10.19": "certifi==2026.10.19.post1"},
        ),
        Agent("kimi", ["kimi-cli==1.52.0"], launch_kimi, TEXT_TURN, python="3.12"),
        Agent(
            "kimi-entry-point",
            ["kimi-cli==1.52.0"],
            launch_kimi_entry_point,
            TEXT_TURN,
            python="3.12",
            venv_name="kimi",
        ),
        Agent(
            "openhands",
            ["openhands==1.16.0"],
            launch_openhands,
            TEXT_TURN,
            python="3.12",
            max_python="3.13",
        ),
    )
}


# Installing.


def _version(python: str) -> tuple[int, int] | None:
    try:
        done = subprocess.run(
            [python, "-c", "import sys; print(*sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except OSError:
        return None
    words = done.stdout.split()
    return (int(words[0]), int(words[1])) if done.returncode == 0 and len(words) == 2 else None


def _parse(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def interpreter_for(agent: Agent) -> tuple[str | None, str]:
    """(the Python to build the agent's venv with, "") or (None, why there is none)."""
    low = _parse(agent.python)
    high = _parse(agent.max_python) if agent.max_python else None
    candidates = [os.environ.get("ACPWIRE_AGENTS_PYTHON", ""), sys.executable, str(PYTHON312)]
    candidates += [shutil.which(f"python3.{minor}") or "" for minor in range(11, 16)]
    # pyenv's builds, which its shims on PATH hide unless selected (`pyenv global`).
    candidates += [str(p) for p in sorted(PYENV_VERSIONS.glob("3.*/bin/python3"))]
    seen: list[str] = []
    for python in filter(None, candidates):
        version = _version(python)
        if version is None:
            continue
        seen.append(f"{python} ({version[0]}.{version[1]})")
        if version >= low and (high is None or version < high):
            return python, ""
    built = low <= (3, 13) and (high is None or high > (3, 13))
    return None, (
        f"{agent.name} requires Python {agent.python_range}; none here: {', '.join(seen)}"
        + (
            " (`make agents-python` builds 3.13 from Debian's source package)"
            if built
            else " (no registry this machine reaches has that CPython: Debian has 3.11 in"
            " bookworm and 3.13 in trixie; npm's portable-python downloads from GitHub)"
        )
    )


_DECLARED = """
import sys, importlib.metadata as md
from pip._vendor.packaging.requirements import Requirement
out, *args = sys.argv[1:]
subs = dict(a.split("=>", 1) for a in args if "=>" in a)
names = [Requirement(a).name for a in args if "=>" not in a]
lines = []
for name in names:
    for raw in md.requires(name) or []:
        req = Requirement(raw)
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
            spec = f"{req.name}{extras}{req.specifier}"
            lines.append(subs.get(spec, spec))
open(out, "w").write("\\n".join(lines) + "\\n")
"""
"""Writes the declared dependencies of the named (already installed) packages to a
requirements file, each ``old=>new`` substitution applied."""


def install(agent: Agent) -> tuple[float | None, str]:
    """Create the agent's venv and install its pinned packages; (seconds, "") or
    (None, why not). An existing venv is kept (delete it to reinstall)."""
    if (agent.venv / "bin" / "python").exists():
        return 0.0, ""
    python, why = interpreter_for(agent)
    if python is None:
        return None, why
    started = time.monotonic()
    pip = [str(agent.venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    steps = [[python, "-m", "venv", str(agent.venv)]]
    if agent.substitute:
        wanted = agent.venv / "requirements.txt"
        steps += [
            [*pip, "--no-deps", *agent.requirements],
            [str(agent.venv / "bin" / "python"), "-c", _DECLARED, str(wanted), *agent.requirements]
            + [f"{old}=>{new}" for old, new in agent.substitute.items()],
            [*pip, "-r", str(wanted)],
        ]
    else:
        steps.append([*pip, *agent.requirements])
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            shutil.rmtree(agent.venv, ignore_errors=True)
            tail = [ln for ln in done.stderr.splitlines() if not ln.startswith("WARNING")][-3:]
            return None, f"{' '.join(step[:4])}... failed: {' / '.join(tail)}"
    return time.monotonic() - started, ""


# The scripted session: what an editor does first, behind the tap.


@dataclass
class Session:
    """What one scripted session saw."""

    sent: bytes
    """Every byte the client wrote to the tap."""
    received: bytes
    """Every byte the client read from the tap."""
    messages: list[JsonObject]
    """Every JSON message the client read, in order."""
    returncode: int | None
    stderr: str
    session_id: str | None = None
    stop_reason: str | None = None
    error: str = ""
    """Why the session stopped early (empty: it ran to the end)."""


INITIALIZE: JsonObject = {
    "protocolVersion": 1,
    "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}},
    "clientInfo": {"name": "acpwire-agents", "version": "1"},
}


def _answer(message: JsonObject) -> JsonObject:
    """The scripted client's answer to an agent's request: a permission allowed once (the
    first ``allow_once`` option, else the first offered), anything else refused."""
    if message.get("method") == "session/request_permission":
        options = message.get("params", {}).get("options", [])
        chosen = next((o for o in options if o.get("kind") == "allow_once"), None)
        chosen = chosen or (options[0] if options else None)
        if chosen is not None:
            outcome = {"outcome": "selected", "optionId": chosen.get("optionId")}
            return {"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": outcome}}
    return {
        "jsonrpc": "2.0",
        "id": message["id"],
        "error": {"code": -32601, "message": f"Method not found: {message.get('method')}"},
    }


class _Client:
    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.sent = bytearray()
        self.received = bytearray()
        self.messages: list[JsonObject] = []
        self._inbox: queue.Queue[JsonObject | None] = queue.Queue()
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        buffer = b""
        while chunk := os.read(self.process.stdout.fileno(), 65536):
            self.received += chunk
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict):
                    self.messages.append(message)
                    self._inbox.put(message)
        self._inbox.put(None)

    def send(self, message: JsonObject) -> None:
        data = json.dumps(message).encode() + b"\n"
        with self._lock:
            self.sent += data
            assert self.process.stdin is not None
            self.process.stdin.write(data)
            self.process.stdin.flush()

    def call(self, msg_id: int, method: str, params: JsonObject) -> JsonObject:
        """Send a request; answer the agent's requests until its response comes."""
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        deadline = time.monotonic() + STEP_S
        while True:
            try:
                message = self._inbox.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"no answer to {method} in {STEP_S:.0f} s") from None
            if message is None:
                raise EOFError(f"the agent closed its stdout before answering {method}")
            if "method" in message and "id" in message:
                self.send(_answer(message))
            elif message.get("id") == msg_id and "method" not in message:
                return message


def tap_argv(launch: Launch, trace: Path, *, wrap: Sequence[str] = ()) -> list[str]:
    """``acpwire tap --trace TRACE -- [WRAP...] AGENT...``."""
    return [str(ACPWIRE), "tap", "--trace", str(trace), "--", *wrap, *launch.argv]


def scripted_session(
    launch: Launch, turn: Turn, trace: Path, *, wrap: Sequence[str] = (), settle_s: float = 1.0
) -> Session:
    """``initialize``, ``session/new`` in the launch's work dir and ``turn``'s prompt,
    through ``acpwire tap`` in front of the agent, then end of input. ``wrap``: argv put
    between the tap and the agent (a byte recorder). ``settle_s``: how long to keep reading
    after the prompt's answer (updates sent late are kept, and checked)."""
    work = launch.work or _work(trace.parent)
    for name, text in turn.files.items():
        (work / name).write_text(text, encoding="utf-8")
    stderr_path = trace.with_suffix(".stderr.log")
    with stderr_path.open("wb") as stderr:
        process = subprocess.Popen(
            tap_argv(launch, trace, wrap=wrap),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=launch.env,
            cwd=launch.cwd or work,
            start_new_session=True,
        )
    client = _Client(process)
    session_id = stop_reason = None
    error = ""
    try:
        client.call(1, "initialize", INITIALIZE)
        made = client.call(2, "session/new", {"cwd": str(work), "mcpServers": []})
        session_id = made.get("result", {}).get("sessionId")
        if session_id is None:
            raise RuntimeError(f"session/new failed: {json.dumps(made)[:300]}")
        prompt = [{"type": "text", "text": turn.prompt}]
        done = client.call(3, "session/prompt", {"sessionId": session_id, "prompt": prompt})
        stop_reason = done.get("result", {}).get("stopReason")
        if stop_reason is None:
            raise RuntimeError(f"session/prompt failed: {json.dumps(done)[:300]}")
        time.sleep(settle_s)
    except (RuntimeError, TimeoutError, EOFError, OSError) as exc:
        error = str(exc)
    finally:
        with client._lock:
            if process.stdin is not None:
                with contextlib.suppress(OSError):
                    process.stdin.close()
        try:
            returncode: int | None = process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            returncode = process.wait(timeout=10)
            error = error or "the agent did not exit within 30 s of end of input"
    time.sleep(0.2)  # the reader thread takes the last bytes
    return Session(
        bytes(client.sent),
        bytes(client.received),
        list(client.messages),
        returncode,
        stderr_path.read_text(encoding="utf-8", errors="replace"),
        session_id,
        stop_reason,
        error,
    )


def read_trace(path: Path) -> list[JsonObject]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def violations(records: Sequence[JsonObject]) -> list[tuple[str, str, str]]:
    """(direction or "end", rule, message) of every violation the tap recorded."""
    found: list[tuple[str, str, str]] = []
    for record in records:
        for v in record.get("violations", []):
            found.append((record.get("dir") or "end", v["rule"], v["message"]))
    return found


# The conformance run: ``acpwire check`` against each agent, launched by its function above.

CHECKED = ("hermes", "gptme", "fast-agent", "mistral-vibe", "kimi", "openhands")
"""The agents ``--check`` runs ``acpwire check`` against (kimi's deprecated entry point left
out)."""
CHECK_OPTIONS: dict[str, list[str]] = {}
"""Extra ``acpwire check`` options per agent (``--write-tool`` / ``--shell-tool``)."""
CHECK_TIMEOUT_S = 30.0
"""``acpwire check --timeout``: the most one answer may take (first turns are slow)."""
ROOT_VAR = "ACPWIRE_AGENT_ROOT"
BASE_URL_VAR = "ACPWIRE_AGENT_BASE_URL"


def check_argv(agent: Agent, report: Path, trace: Path, log: Path) -> list[str]:
    """``acpwire check`` against ``agent``: the run's scratch folder and loopback model given
    as ``--agent-env`` templates to ``python -m bench.agents.real --exec NAME``, which writes
    the agent's config under ``{tmp}`` with its launch function and execs the agent."""
    return [
        str(ACPWIRE),
        "check",
        "--agent-env",
        f"{ROOT_VAR}={{tmp}}",
        "--agent-env",
        f"{BASE_URL_VAR}={{base_url}}",
        "--model-name",
        MODEL,
        "--timeout",
        str(CHECK_TIMEOUT_S),
        "--format",
        "json",
        "-o",
        str(report),
        "--trace",
        str(trace),
        "--agent-log",
        str(log),
        *CHECK_OPTIONS.get(agent.name, []),
        "--",
        sys.executable,
        "-m",
        "bench.agents.real",
        "--exec",
        agent.name,
    ]


def exec_agent(name: str) -> None:
    """Launch ``name`` as its function says, under ``$ACPWIRE_AGENT_ROOT`` (the check's
    ``{tmp}``) against ``$ACPWIRE_AGENT_BASE_URL``: replaces this process."""
    root = Path(os.environ[ROOT_VAR]) / name
    root.mkdir(parents=True, exist_ok=True)
    launch = AGENTS[name].launch(root, os.environ[BASE_URL_VAR])
    os.chdir(launch.cwd or launch.work or root)
    os.execve(launch.argv[0], launch.argv, launch.env)


def check_agent(agent: Agent, out: Path) -> JsonObject:
    """``acpwire check`` against one agent; the JSON report's summary (the report itself in
    ``out/check-<name>.json``, its trace and the agent's stderr beside it)."""
    result: JsonObject = {"agent": agent.name}
    why_not = agent.missing()
    if why_not is not None:
        return {**result, "status": "skipped", "why": why_not}
    report = out / f"check-{agent.name}.json"
    trace = out / f"check-{agent.name}.trace.jsonl"
    log = out / f"check-{agent.name}.stderr.log"
    for path in (report, trace, log):
        path.unlink(missing_ok=True)
    done = subprocess.run(
        check_argv(agent, report, trace, log),
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    if not report.exists():
        return {**result, "status": "failed", "why": done.stderr.strip()[-500:]}
    checks = json.loads(report.read_text(encoding="utf-8"))
    failed = [c for c in checks["checks"] if c["status"] == "FAIL"]
    return {
        **result,
        "status": "checked",
        "exit": done.returncode,
        "summary": checks["summary"],
        "fail": [f"{c['name']}: {c['evidence']}" for c in failed],
    }


# The command.


def run_agent(agent: Agent, out: Path, do_install: bool) -> JsonObject:
    """Install (if asked), then one scripted session behind the tap; the summary."""
    from bench.model_server import BenchModelServer

    result: JsonObject = {"agent": agent.name, "requirements": agent.requirements}
    if do_install and agent.missing() is not None and not agent.blocked:
        seconds, why = install(agent)
        if seconds is None:
            return {**result, "status": "not installed", "why": why}
        result["install_s"] = round(seconds, 1)
    why_not = agent.missing()
    if why_not is not None:
        return {**result, "status": "skipped", "why": why_not}
    root = out / agent.name
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    trace = root / "trace.jsonl"
    server = BenchModelServer(agent.turn.script, rules=agent.turn.rules, model=MODEL)
    server.start()
    try:
        launch = agent.launch(root, server.base_url)
        started = time.monotonic()
        session = scripted_session(launch, agent.turn, trace)
        result["session_s"] = round(time.monotonic() - started, 1)
    finally:
        server.stop()
    result.update(
        argv=launch.argv,
        files=sorted(launch.files),
        exit=session.returncode,
        stop_reason=session.stop_reason,
        model_requests=len(server.requests),
        status="ran" if not session.error else "failed",
    )
    if session.error:
        result["why"] = session.error
    if trace.exists():
        records = read_trace(trace)
        result["violations"] = [list(v) for v in violations(records)]
        report = subprocess.run(
            [str(ACPWIRE), "trace", "report", str(trace), "--format", "md"],
            capture_output=True,
            text=True,
            check=False,
        )
        (root / "report.md").write_text(report.stdout, encoding="utf-8")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--install", action="store_true", help="install missing agents first")
    parser.add_argument(
        "--install-only", action="store_true", help="install missing agents, run nothing"
    )
    parser.add_argument("--only", nargs="*", choices=sorted(AGENTS), default=None)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--check", action="store_true", help="run `acpwire check` against each agent instead"
    )
    parser.add_argument("--exec", dest="exec_name", choices=sorted(AGENTS), help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.exec_name:
        exec_agent(options.exec_name)
    options.out.mkdir(parents=True, exist_ok=True)
    if options.check:
        checked = []
        for name in options.only or list(CHECKED):
            result = check_agent(AGENTS[name], options.out)
            checked.append(result)
            counts = result.get("summary", {})
            print(
                f"{name}: {result['status']}"
                + (f" ({result['why']})" if "why" in result else "")
                + (
                    f", {counts['pass']} PASS {counts['fail']} FAIL {counts['skip']} SKIP"
                    if counts
                    else ""
                ),
                flush=True,
            )
            for line in result.get("fail", []):
                print(f"  FAIL {line}", flush=True)
        (options.out / "check-summary.json").write_text(json.dumps(checked, indent=2) + "\n")
        return 0
    if options.install_only:
        failed = 0
        for name in options.only or list(AGENTS):
            seconds, why = install(AGENTS[name])
            print(f"{name}: " + (f"installed ({seconds:.0f} s)" if seconds is not None else why))
            failed += seconds is None
        return 1 if failed else 0
    summary = []
    for name in options.only or list(AGENTS):
        result = run_agent(AGENTS[name], options.out, options.install)
        summary.append(result)
        flagged = result.get("violations", [])
        print(
            f"{name}: {result['status']}"
            + (f" ({result['why']})" if "why" in result else "")
            + (f", {len(flagged)} violations" if "violations" in result else ""),
            flush=True,
        )
        for direction, rule, message in flagged:
            print(f"  [{rule}] {direction}: {message}", flush=True)
    (options.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
