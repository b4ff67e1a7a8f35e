"""Render the non-model modules of ``acp_v1`` from jinja2 templates."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from .ir import Leniency, Method, OpenUnion
from .layout import method_group
from .models import reject_known_function, validator_function

TEMPLATES = Path(__file__).parent / "templates"

SIDES = (
    ("agent", "Agent", "What an ACP agent implements: the methods a client calls on it."),
    ("client", "Client", "What an ACP client implements: the methods an agent calls on it."),
)
PEER_SIDES = (
    ("agent", "AgentPeer", "The agent as seen by a client: call its methods with typed params."),
    ("client", "ClientPeer", "The client as seen by an agent: call its methods with typed params."),
)


@dataclass(frozen=True, slots=True)
class Envelope:
    name: str
    method: str
    kind: str
    params: str


def docstring(text: str, indent: int = 8) -> str:
    """``text`` as the body of a triple-quoted docstring indented by ``indent`` spaces:
    backslashes and quotes escaped, blank lines left empty."""
    body = text.strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    pad = " " * indent
    return "\n".join(pad + line if line.strip() else "" for line in body.splitlines())


def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        keep_trailing_newline=True,
        trim_blocks=False,
        lstrip_blocks=False,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    env.filters["docstring"] = docstring
    return env


def handler_names(methods: list[Method]) -> dict[Method, str]:
    """Handler names; a method that is both request and notification on one side
    gets ``_notification`` on the notification handler."""
    seen = Counter((m.side, m.handler) for m in methods)
    return {
        m: m.handler
        + ("_notification" if seen[(m.side, m.handler)] > 1 and m.kind == "notification" else "")
        for m in methods
    }


def _pascal(text: str) -> str:
    return "".join(
        p[:1].upper() + p[1:] for p in text.replace("$/", "").replace("/", "_").split("_") if p
    )


def render_all(
    methods: list[Method],
    rules: list[Leniency],
    header: str,
    version: int,
    unions: list[OpenUnion],
    placed: dict[str, str],
) -> dict[str, str]:
    """File name -> source for every template-rendered module (relative imports only);
    ``placed`` maps each model name to its module of ``acp_v1.models``."""
    env = _env()
    names = handler_names(methods)
    ordered_names = [names[m] for m in methods]
    files: dict[str, str] = {}
    files["_base.py"] = env.get_template("_base.py.j2").render(header=header)
    functions = sorted(
        {
            (validator_function(r), repr(r.fallback), r.on_error, r.on_null, r.skip_invalid_items)
            for r in rules
        }
    )
    rejecters = [(reject_known_function(u), u.tag, u.known) for u in unions]
    files["_lenient.py"] = env.get_template("_lenient.py.j2").render(
        header=header, functions=functions, rejecters=rejecters
    )
    constants = sorted({m.constant: m for m in methods}.values(), key=lambda m: m.constant)
    files["methods.py"] = env.get_template("methods.py.j2").render(
        header=header,
        methods=methods,
        handler_names=ordered_names,
        constants=constants,
        protocol_version=version,
    )
    files["interfaces.py"] = env.get_template("interfaces.py.j2").render(
        header=header, methods=methods, handler_names=names, sides=SIDES
    )
    files["peers.py"] = env.get_template("peers.py.j2").render(
        header=header, methods=methods, handler_names=names, sides=PEER_SIDES
    )
    files.update(_render_dispatch(env, methods, header, placed))
    files["_lazy.py"] = env.get_template("_lazy.py.j2").render(header=header)
    files["_open.py"] = env.get_template("_open.py.j2").render(header=header)
    return files


def _render_dispatch(
    env: jinja2.Environment, methods: list[Method], header: str, placed: dict[str, str]
) -> dict[str, str]:
    """``dispatch/__init__.py`` (tables, lazy loader) and one envelope module per group."""
    by_module: dict[str, list[Envelope]] = defaultdict(list)
    where: dict[str, str] = {}
    inbound: list[dict[str, Any]] = []
    for role in ("agent", "client"):
        names_for_role: list[str] = []
        pairs: list[tuple[str, str]] = []
        for m in methods:
            if m.side not in (role, "protocol"):
                continue
            env_name = f"{_pascal(m.name)}{m.kind.title()}Envelope"
            if env_name not in where:
                where[env_name] = method_group(m.name)
                by_module[where[env_name]].append(Envelope(env_name, m.name, m.kind, m.params))
            names_for_role.append(env_name)
            pairs.append((env_name, m.name))
        inbound.append(
            {
                "alias": f"{role.title()}Inbound",
                "role": role,
                "names": names_for_role,
                "pairs": pairs,
            }
        )
    files: dict[str, str] = {}
    template = env.get_template("envelopes.py.j2")
    for module, envelopes in by_module.items():
        imports: dict[str, set[str]] = defaultdict(set)
        for envelope in envelopes:
            imports[placed[envelope.params]].add(envelope.params)
        files[f"dispatch/{module}.py"] = template.render(
            header=header,
            envelopes=envelopes,
            imports=[(mod, sorted(names)) for mod, names in sorted(imports.items())],
        )
    files["dispatch/__init__.py"] = env.get_template("dispatch_init.py.j2").render(
        header=header,
        where=sorted(where.items()),
        inbound=inbound,
        modules=[
            (mod, sorted(e.name for e in envelopes)) for mod, envelopes in sorted(by_module.items())
        ],
    )
    return files


def render_models_init(header: str, defined: dict[str, list[str]]) -> str:
    """``models/__init__.py``: every model module's names, each imported on first use
    (``defined``: module -> the names it defines, in import order)."""
    names = sorted((name, module) for module, names in defined.items() for name in names)
    return (
        _env()
        .get_template("models_init.py.j2")
        .render(header=header, names=names, modules=list(defined.items()))
    )


def dumps(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True) + "\n"


def render_package_init(header: str) -> str:
    """``acp_v1/__init__.py``: the package's public names, its text continuing the
    header's docstring."""
    return _env().get_template("package_init.py.j2").render(header=header.removesuffix('"""'))
