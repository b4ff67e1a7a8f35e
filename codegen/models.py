"""Run datamodel-code-generator on the laid-out schema and return the model modules.

The generator is pinned (see pyproject.toml) and driven only through its documented
options, a base class, a validators table and two custom templates; its output is never
edited afterwards.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .ir import Leniency, OpenUnion
from .layout import Layout

GENERATOR_OPTIONS = (
    "--input-file-type=jsonschema",
    "--output-model-type=pydantic_v2.BaseModel",
    "--target-python-version=3.11",
    "--snake-case-field",
    "--remove-special-field-name-prefix",
    "--use-annotated",
    "--use-field-description",
    "--use-schema-description",
    "--use-title-as-name",
    "--use-standard-collections",
    "--use-union-operator",
    "--use-type-alias",
    "--enum-field-as-literal=all",
    "--use-one-literal-as-default",
    "--use-double-quotes",
    "--skip-root-model",
    "--disable-timestamp",
    # Evaluated annotations import faster than strings pydantic must compile one by one.
    "--disable-future-imports",
    # Modules import the classes they use, never a sibling module (whose name could be
    # shadowed by a field of the same name).
    "--use-exact-imports",
    # JSON integers and booleans only: no "1" -> 1 or true -> 1 coercion on the wire.
    "--strict-types",
    "int",
    "bool",
    # URIs stay plain strings: pydantic's URL type costs import time and normalises values.
    "--type-mappings",
    "string+uri=string",
    "--formatters",
    "ruff-check",
    "ruff-format",
    "--disable-warnings",
)


TEMPLATE_DIR = Path(__file__).parent / "templates" / "datamodel"
RUFF_SETTINGS = (
    'line-length = 100\ntarget-version = "py311"\n[lint]\nselect = ["I", "F401"]\n'
    '[lint.isort]\nknown-first-party = ["acp_v1", "acpwire", "codegen", "{package}"]\n'
    "combine-as-imports = true\n"
)


def python_field(prop: str) -> str:
    """The attribute name the generator gives a JSON property (``toolCallId`` -> ``tool_call_id``)."""
    name = prop.lstrip("_")
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def validator_function(rule: Leniency) -> str:
    """Name of the ``acp_v1._lenient`` function implementing ``rule``."""
    parts = []
    if rule.on_null:
        parts.append("null")
    if rule.on_error:
        parts.append("error")
    if rule.skip_invalid_items:
        parts.append("items")
    fallback = rule.fallback
    if fallback is None:
        what = "none"
    elif fallback == []:
        what = "empty_list"
    elif isinstance(fallback, bool):
        what = str(fallback).lower()
    elif isinstance(fallback, str):
        what = "str_" + re.sub(r"\W", "_", fallback)
    else:
        what = (
            python_field(rule.model[:1].lower() + rule.model[1:]) + "_" + python_field(rule.field)
        )
    return f"lenient_{'_'.join(parts)}_{what}"


def reject_known_function(union: OpenUnion) -> str:
    """Name of the ``_lenient`` function that keeps known tags out of the union's
    catch-all models."""
    return f"reject_known_{python_field(union.name[:1].lower() + union.name[1:])}"


def validators_config(package: str, open_unions: Sequence[OpenUnion] = ()) -> dict[str, Any]:
    """The generator's ``--validators`` table: an after-validator on each open union's
    catch-all, so that a malformed *known* variant is rejected instead of being kept as an
    unknown one (and a known tag cannot be given to the catch-all)."""
    table = {
        model: {
            "validators": [
                {
                    "fields": [python_field(union.tag)],
                    "function": f"{package}._lenient.{reject_known_function(union)}",
                    "mode": "after",
                }
            ]
        }
        for union in open_unions
        for model in union.catch_alls
    }
    return {model: table[model] for model in sorted(table)}


def template_data(rules: list[Leniency], open_unions: Sequence[OpenUnion]) -> dict[str, Any]:
    """Per-model data for the custom templates (``codegen/templates/datamodel``).

    ``lenient`` maps a field to the ``_lenient.Lenient`` object its annotation carries
    (one shared object per rule: no per-class validator methods, which cost import time);
    ``union_mode`` makes an open union that codegen closed with a synthesized catch-all
    try its known (discriminated) members first and the catch-all last (a schema-defined
    catch-all refuses the known tags, so the default smart mode picks the same).
    """
    data: dict[str, dict[str, Any]] = defaultdict(dict)
    for rule in rules:
        data[rule.model].setdefault("lenient", {})[python_field(rule.field)] = validator_function(
            rule
        )
    for union in open_unions:
        if union.synthesized:
            data[union.name]["union_mode"] = "left_to_right"
    return {name: data[name] for name in sorted(data)}


def lenient_imports(rules: list[Leniency], package: str) -> str:
    """The generator's ``--additional-imports``: the validators the templates name."""
    return ",".join(sorted({f"{package}._lenient.{validator_function(r)}" for r in rules}))


def defined_names(source: str) -> list[str]:
    """The classes and type aliases a generated module defines (read, never edited)."""
    names: list[str] = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [t.id for t in targets if isinstance(t, ast.Name) and t.id != "__all__"]
    return names


def generate_models(
    layout: Layout,
    rules: list[Leniency],
    header: str,
    open_unions: list[OpenUnion],
    package: str,
) -> dict[str, str]:
    """Return the generated model modules (file name -> source, each starting with
    ``header``), one per module of ``layout``."""
    placed = layout.placed
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "schema.json").write_text(json.dumps(layout.schema, indent=1, sort_keys=True))
        validators = validators_config(package, open_unions)
        extra = template_data(rules, open_unions)
        for name, table in (("validators.json", validators), ("extra.json", extra)):
            keyed = {f"{placed[model]}.{model}": value for model, value in table.items()}
            (folder / name).write_text(json.dumps(keyed, indent=1))
        out = folder / "models"
        cmd = [
            sys.executable,
            "-m",
            "datamodel_code_generator",
            f"--input={folder / 'schema.json'}",
            f"--output={out}",
            f"--validators={folder / 'validators.json'}",
            f"--custom-file-header={header}",
            f"--extra-template-data={folder / 'extra.json'}",
            f"--custom-template-dir={TEMPLATE_DIR}",
            f"--base-class={package}._base.AcpModel",
            f"--additional-imports={lenient_imports(rules, package)}",
            *GENERATOR_OPTIONS,
        ]
        # The generator runs ruff in its working folder: give it the project's settings.
        (folder / "ruff.toml").write_text(RUFF_SETTINGS.replace("{package}", package))
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=folder)
        if proc.returncode != 0:
            raise RuntimeError(f"datamodel-code-generator failed:\n{proc.stderr[-4000:]}")
        # The generator's own __init__.py is only its header: the package's is rendered.
        return {
            path.name: path.read_text()
            for path in sorted(out.glob("*.py"))
            if path.stem in layout.modules
        }
