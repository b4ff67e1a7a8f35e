"""Which agent the backend serves: built-in names, ``module:callable``, the ``acpwire.agents``
entry points, and one clear line (exit code 2) for a spec that cannot be served."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acpwire.agent.base import BaseAgent
from acpwire.agent.embedded.factory import DefaultAgentFactory
from acpwire.agent.factory import BaseAgentFactory, FunctionFactory, SessionContext
from acpwire.agent.seam import Message, TurnResult
from acpwire.config import Settings
from acpwire.server.process.choice import (
    BUILTIN_AGENTS,
    ENTRY_POINT_GROUP,
    AgentSpecError,
    choose_factory,
    load_factory,
)

ROOT = Path(__file__).resolve().parents[2]

AGENTS_MODULE = """
from acpwire import BaseAgent, BaseAgentFactory

class Echo(BaseAgent):
    def run_turn(self, content, history, *, cwd, hooks):
        return self.reply(content, history, "echo")

def make(context):
    return Echo(context)

class Factory(BaseAgentFactory):
    name = "echo factory"
    models = ("small", "large")

    @classmethod
    def from_settings(cls, settings):
        made = cls()
        made.home = settings.home
        return made

    def create_agent(self, context):
        return Echo(context)

instance = Factory()

class Incomplete:
    def create(self, session_id, cwd, model, internal_id=None):
        raise AssertionError

not_callable = 42
"""


@pytest.fixture
def packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory on sys.path with ``byo_agents`` (the module above), ``byo_broken``
    (fails on import) and an installed distribution registering ``echo`` and ``broken``."""
    root = tmp_path / "site"
    root.mkdir()
    (root / "byo_agents.py").write_text(AGENTS_MODULE)
    (root / "byo_broken.py").write_text("raise RuntimeError('no config\\nfound')\n")
    info = root / "byo_agents-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: byo-agents\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\necho = byo_agents:Factory\nbroken = byo_broken:make\n"
    )
    monkeypatch.syspath_prepend(str(root))
    yield root
    for name in ("byo_agents", "byo_broken"):
        sys.modules.pop(name, None)


def _settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home", file_values={"model": "m", "base_url": "http://x"})


def test_built_in_names_are_the_registrations_pyproject_declares() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["entry-points"][ENTRY_POINT_GROUP] == BUILTIN_AGENTS


def test_default_and_auto_serve_the_embedded_agent_without_hermes(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    default = load_factory("default", settings)
    assert isinstance(default, DefaultAgentFactory)
    assert default.planned_model(None) == "m"  # built from the settings' [model] table
    assert isinstance(choose_factory(settings, env={}), DefaultAgentFactory)  # auto
    assert isinstance(
        choose_factory(settings, env={"ACPWIRE_AGENT": "DEFAULT"}), DefaultAgentFactory
    )


def test_a_function_an_agent_class_a_factory_class_and_instance(
    packages: Path, tmp_path: Path
) -> None:
    settings = _settings(tmp_path)
    function = load_factory("byo_agents:make", settings)
    agent_class = load_factory("byo_agents:Echo", settings)
    assert isinstance(function, FunctionFactory) and isinstance(agent_class, FunctionFactory)
    agent = agent_class.create("s1", "/w", None)
    assert (agent.model, agent.internal_session_id) == ("default", "s1")
    made = load_factory("byo_agents:Factory", settings)
    assert isinstance(made, BaseAgentFactory) and made.name == "echo factory"
    assert made.home == settings.home  # type: ignore[attr-defined]
    # The first listed model is a new session's; a restored one keeps its internal id.
    restored = made.create("s2", "/w", None, internal_id="internal-7")
    assert (restored.model, restored.internal_session_id) == ("small", "internal-7")
    assert load_factory(" byo_agents:instance ", settings) is sys.modules["byo_agents"].instance


def test_a_registered_name_from_an_installed_package(packages: Path, tmp_path: Path) -> None:
    factory = choose_factory(_settings(tmp_path), env={"ACPWIRE_AGENT": "echo"})
    assert factory.name == "echo factory" and factory.available_models() == ["small", "large"]


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("no_such_pkg.agent:make", "no module named 'no_such_pkg'"),
        ("byo_agents:nothing", "byo_agents has no 'nothing'"),
        ("byo_agents:", "expected module:callable"),
        ("byo_broken:make", "importing byo_broken failed: RuntimeError: no config found"),
        ("byo_agents:not_callable", "int is not callable"),
        ("byo_agents:Incomplete", "the factory lacks name, setup_hint"),
        ("nobody", "unknown agent 'nobody'"),
        ("broken", "agent 'broken' (byo_broken:make) cannot be loaded"),
    ],
)
def test_a_spec_that_cannot_be_served_says_why_in_one_line(
    packages: Path, tmp_path: Path, spec: str, says: str
) -> None:
    with pytest.raises(AgentSpecError) as caught:
        load_factory(spec, _settings(tmp_path))
    message = str(caught.value)
    assert says in message and "\n" not in message


def test_unknown_name_lists_the_registered_ones(packages: Path, tmp_path: Path) -> None:
    with pytest.raises(AgentSpecError, match=r"\(auto, default, hermes, broken, echo\)"):
        load_factory("nobody", _settings(tmp_path))


def _acpwire(args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "ACPWIRE_HOME": str(tmp_path)}
    return subprocess.run(
        [sys.executable, "-m", "acpwire", *args],
        input="",
        capture_output=True,
        text=True,
        env={**base, **env},
        timeout=60,
        check=False,
    )


@pytest.mark.subprocess
def test_the_command_line_refuses_a_bad_spec_with_one_line_and_exit_code_2(
    tmp_path: Path,
) -> None:
    by_option = _acpwire(["--agent", "no_such_pkg:make"], tmp_path)
    assert by_option.returncode == 2 and by_option.stdout == ""
    assert by_option.stderr == (
        "acpwire: agent 'no_such_pkg:make': no module named 'no_such_pkg' (it is imported as "
        "Python imports any module, never from the current folder: install its package, or "
        "put the folder holding it on PYTHONPATH)\n"
    )
    by_env = _acpwire([], tmp_path, ACPWIRE_AGENT="mypkg:make_agent")
    assert by_env.returncode == 2 and by_env.stderr.count("\n") == 1
    assert "Traceback" not in by_env.stderr and "no module named 'mypkg'" in by_env.stderr


@pytest.mark.subprocess
def test_check_names_the_agent_a_spec_serves(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "byo_agents.py").write_text(textwrap.dedent(AGENTS_MODULE))
    done = _acpwire(["--check", "--agent", "byo_agents:Factory"], tmp_path, PYTHONPATH=str(site))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("acpwire check OK: echo factory, provider custom, 2 model(s)")


def test_session_context_is_what_a_function_factory_receives() -> None:
    seen: list[SessionContext] = []

    def build(context: SessionContext) -> BaseAgent:
        seen.append(context)
        return Plain(context)

    FunctionFactory(build).create("s", "/w", "pick", None)
    assert seen == [SessionContext(session_id="s", cwd="/w", model="pick", internal_id="s")]


class Plain(BaseAgent):
    def run_turn(
        self, content: str | list[dict[str, Any]], history: list[Message], *, cwd: str, hooks: Any
    ) -> TurnResult:
        return self.reply(content, history, "ok")


def test_hermes_is_a_registration_built_without_importing_hermes(tmp_path: Path) -> None:
    from acpwire.hermes.factory import HermesAgentFactory

    factory = load_factory("hermes", _settings(tmp_path))
    assert isinstance(factory, HermesAgentFactory) and "run_agent" not in sys.modules


def test_choosing_a_built_in_agent_reads_no_package_metadata(tmp_path: Path) -> None:
    """Start-up cost: importlib.metadata (some 20 ms) loads only to look up a name that is
    neither built in nor module:callable."""
    script = (
        "import sys\n"
        "from acpwire.config import Settings\n"
        "from acpwire.server.process.choice import choose_factory\n"
        "import acpwire.server.stdio, acpwire.cli, acpwire.cli.serve\n"
        "choose_factory(Settings(home=sys.argv[1]), env={})\n"
        "choose_factory(Settings(home=sys.argv[1]), 'acpwire.agent.embedded.factory:DefaultAgentFactory')\n"
        "print('importlib.metadata' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert done.stdout == "False\n"


class Misspelt(BaseAgent):
    def run_trun(self) -> None:
        raise AssertionError("never called")


class AgentBase(BaseAgent):
    """A base of the agents a factory makes: no run_turn of its own, and no near miss."""


def typed_misspelt(context: SessionContext) -> Misspelt:
    raise AssertionError("never called")


def typed_base(context: SessionContext) -> AgentBase:
    raise AssertionError("never called")


def test_a_factory_annotated_to_return_a_misspelt_agent_is_refused_a_base_is_not() -> None:
    from acpwire.server.process.choice import as_factory

    with pytest.raises(AgentSpecError) as caught:
        as_factory(typed_misspelt, None, "m:typed_misspelt")
    assert str(caught.value) == (
        "agent 'm:typed_misspelt': typed_misspelt returns Misspelt, not an agent: it defines "
        "run_trun, not run_turn: did you mean run_turn?"
    )
    assert as_factory(typed_base, None, "m:typed_base").name == "typed_base"


def test_what_a_spec_names_is_checked_without_building_an_agent() -> None:
    from acpwire.server.process.choice import as_factory

    async def eager(context: SessionContext) -> BaseAgent:
        raise AssertionError("never called")

    def two(context: SessionContext, extra: int) -> BaseAgent:
        raise AssertionError("never called")

    class Typo(BaseAgent):
        def run_trun(self) -> None:
            raise AssertionError("never called")

    class NoCreate(BaseAgentFactory):
        def create_agnet(self, context: SessionContext) -> BaseAgent:
            raise AssertionError("never called")

    def refused(target: object) -> str:
        with pytest.raises(AgentSpecError) as caught:
            as_factory(target, None, "m:x")
        return str(caught.value)

    prefix = "test_what_a_spec_names_is_checked_without_building_an_agent.<locals>"
    assert refused(eager) == (
        f"agent 'm:x': {prefix}.eager is async: a factory is a plain function of the "
        f"SessionContext (def {prefix}.eager(context)), called in a worker thread"
    )
    assert refused(two).startswith(f"agent 'm:x': {prefix}.two(context: 'SessionContext', ")
    assert refused(two).endswith(
        f"cannot be called with the SessionContext alone: write {prefix}.two(context)"
    )
    assert refused(Typo) == (
        f"agent 'm:x': {prefix}.Typo is not an agent: it defines run_trun, not run_turn: did "
        "you mean run_turn?"
    )
    assert refused(NoCreate) == (
        "agent 'm:x': NoCreate does not define create_agent(self, context); did you mean "
        "create_agent (it defines create_agnet)?"
    )
    assert as_factory(Plain, None, "m:Plain").name.endswith("Plain")
