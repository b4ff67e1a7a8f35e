"""Every code block of the docs is true: no block in README.md or docs/*.md can drift.

A fenced block whose language is Python (``python``, ``py``, ``python3``) is
one of three kinds, told by its info string; any other info string fails, so a new block
cannot escape:

- ```` ```python ````: executed. A file's plain blocks run in order in one namespace (a
  block may use what an earlier one of the same file defined), in a scratch folder, under
  a module name (``if __name__ == "__main__"`` parts do not run); top-level ``await``
  runs in an event loop.
- ```` ```python file=examples/NAME.py ````: a verbatim excerpt of that example (compared
  after removing the common indentation; a line ``...`` stands for lines left out), which
  ``test_examples.py`` runs for real.
- ```` ```python fragment ````: compiled only (a sketch using names from the prose).

JSON and TOML blocks parse. Shell blocks are not run, but the project commands they and
the inline code name exist: every ``make X`` is a Makefile target, every ``acpwire`` flag
is one of the command's. The signatures LIBRARY.md shows inline match the code
(keyword-only parameters after ``*``), and its import table names only what imports.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import subprocess
import sys
import textwrap
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import anyio
import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
PYTHON = {"python", "py", "python3"}
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int
    """1-based line of the opening fence."""
    info: str
    code: str

    @property
    def language(self) -> str:
        return self.info.split()[0].lower() if self.info.split() else ""

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def blocks(doc: Path) -> list[Block]:
    """The fenced code blocks of ``doc`` (CommonMark fences, indented ones included)."""
    found: list[Block] = []
    lines = doc.read_text().splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None or ("`" in opening["info"] and opening["fence"][0] == "`"):
            i += 1
            continue
        indent, fence = len(opening["indent"]), opening["fence"]
        body: list[str] = []
        j = i + 1
        while j < len(lines):
            closing = FENCE.match(lines[j])
            if (
                closing is not None
                and closing["fence"][0] == fence[0]
                and len(closing["fence"]) >= len(fence)
                and not closing["info"].strip()
            ):
                break
            text = lines[j]
            body.append(text[min(indent, len(text) - len(text.lstrip(" "))) :])
            j += 1
        found.append(Block(doc, i + 1, opening["info"].strip(), "\n".join(body) + "\n"))
        i = j + 1
    return found


ALL = [block for doc in DOCS for block in blocks(doc)]
PY = [block for block in ALL if block.language in PYTHON]


def kind(block: Block) -> str:
    """``run``, ``fragment``, ``excerpt``, or ``unmarked`` (a mistake in the doc)."""
    rest = block.info.split()[1:]
    if not rest:
        return "run"
    if rest == ["fragment"]:
        return "fragment"
    if len(rest) == 1 and rest[0].startswith("file=examples/"):
        return "excerpt"
    return "unmarked"


def test_the_docs_have_python_blocks_of_each_kind() -> None:
    # The collector itself: if it found nothing it would prove nothing.
    kinds = {kind(block) for block in PY}
    assert {"run", "fragment", "excerpt"} <= kinds
    assert any(block.doc.name == "CLIENT_QUIRKS.md" for block in PY)


@pytest.mark.parametrize("block", PY, ids=[block.where for block in PY])
def test_every_python_block_is_marked_and_compiles(block: Block) -> None:
    assert kind(block) != "unmarked", (
        f"{block.where}: python block with info {block.info!r}: plain ```python blocks run, "
        "```python fragment ones only compile, ```python file=examples/NAME.py ones are "
        "excerpts of an example"
    )
    if kind(block) == "excerpt":
        return  # checked against its file below (an excerpt with `...` need not compile)
    try:
        compile(block.code, block.where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    except SyntaxError as exc:
        raise AssertionError(f"{block.where}: {exc}") from None


def _matches(want: list[str], lines: list[str], start: int, base: str | None) -> bool:
    """``want`` (segments joined by ``...`` lines) appears in ``lines`` from ``start`` on,
    every segment indented by the same ``base``."""
    if not want:
        return True
    if want[0].strip() == "...":
        return any(_matches(want[1:], lines, i, base) for i in range(start, len(lines) + 1))
    cut = next((k for k, line in enumerate(want) if line.strip() == "..."), len(want))
    segment, rest = want[:cut], want[cut:]
    candidates = [start] if base is not None else range(start, len(lines))
    for i in candidates:
        window = lines[i : i + len(segment)]
        if len(window) < len(segment):
            continue
        indent = base
        if indent is None:
            first = window[0]
            margin = (
                len(first)
                - len(first.lstrip(" "))
                - (len(segment[0]) - len(segment[0].lstrip(" ")))
            )
            if margin < 0:
                continue
            indent = " " * margin
        same = all(
            (got.strip() == "" and line.strip() == "") or got == indent + line
            for got, line in zip(window, segment, strict=True)
        )
        if same and _matches(rest, lines, i + len(segment), indent):
            return True
    return False


EXCERPTS = [block for block in PY if kind(block) == "excerpt"]


@pytest.mark.parametrize("block", EXCERPTS, ids=[block.where for block in EXCERPTS])
def test_an_excerpt_is_verbatim_in_its_example(block: Block) -> None:
    path = ROOT / block.info.split()[1].removeprefix("file=")
    assert path.parent == ROOT / "examples" and path.is_file(), f"{block.where}: no {path}"
    want = textwrap.dedent(block.code).strip("\n").splitlines()
    found = _matches(want, path.read_text().splitlines(), 0, None)
    assert found, f"{block.where}: not found verbatim in {path.relative_to(ROOT)}"


RUN_DOCS = sorted({block.doc for block in PY if kind(block) == "run"})


@pytest.mark.parametrize("doc", RUN_DOCS, ids=[str(doc.relative_to(ROOT)) for doc in RUN_DOCS])
def test_the_plain_python_blocks_run(
    doc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": f"docs_{doc.stem.lower()}"}
    for block in blocks(doc):
        if block.language not in PYTHON or kind(block) != "run":
            continue
        code = compile(block.code, block.where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        try:
            if code.co_flags & inspect.CO_COROUTINE:

                async def run(code: Any = code) -> None:
                    await eval(code, namespace)

                anyio.run(run)
            else:
                exec(code, namespace)
        except Exception as exc:
            raise AssertionError(f"{block.where} failed: {exc!r}") from exc


DATA = [block for block in ALL if block.language in {"json", "toml"}]


@pytest.mark.parametrize("block", DATA, ids=[block.where for block in DATA])
def test_the_json_and_toml_blocks_parse(block: Block) -> None:
    # A settings snippet a user pastes must at least be well-formed (JSON: one value, or
    # one per line as in a trace).
    if block.language == "toml":
        tomllib.loads(block.code)
        return
    try:
        json.loads(block.code)
    except json.JSONDecodeError:
        for line in block.code.splitlines():
            if line.strip():
                json.loads(line)


# -- project commands named in the docs -----------------------------------------------------


def _prose_code(doc: Path, *, shell_lines: bool = True) -> list[str]:
    """The doc's inline code spans, and its shell lines unless ``shell_lines`` is False
    (YAML blocks count as shell: a CI job's ``run:`` lines are commands)."""
    text = doc.read_text()
    shell = [
        line
        for block in blocks(doc)
        if block.language in {"sh", "shell", "bash", "console", "yaml", "yml", ""}
        for line in block.code.splitlines()
    ]
    fenced = re.compile(r"^ *(`{3,}|~{3,}).*?^ *\1 *$", re.S | re.M)
    spans = re.findall(r"(?<!`)`([^`]+)`(?!`)", fenced.sub("", text))
    return shell + spans if shell_lines else spans


@cache
def _make_targets() -> frozenset[str]:
    makefile = (ROOT / "Makefile").read_text()
    return frozenset(re.findall(r"^([a-z][\w-]*)\s*:(?!=)", makefile, re.M))


@pytest.mark.parametrize("doc", DOCS, ids=[str(doc.relative_to(ROOT)) for doc in DOCS])
def test_every_make_target_named_exists(doc: Path) -> None:
    named = {
        target
        for code in _prose_code(doc)
        for target in re.findall(r"(?:^|[;&|(]\s*)make ([a-z][\w-]*)", code, re.M)
    }
    assert named <= _make_targets(), f"{doc.name}: not Makefile targets: {named - _make_targets()}"


@cache
def _help(command: str | None) -> str:
    argv = [sys.executable, "-m", "acpwire", *(command.split() if command else []), "--help"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True, cwd=ROOT)
    return done.stdout


def _commands() -> set[str]:
    section = _help(None).split("commands:", 1)[1]
    return set(re.findall(r"^    ([a-z][\w-]*) ", section, re.M))


def _flags(code: str) -> list[tuple[str | None, str]]:
    """(sub-command or None, flag) for each ``acpwire`` command line in ``code``."""
    found: list[tuple[str | None, str]] = []
    for match in re.finditer(r"(?:^|[\s/`(])acpwire((?: +[^\s#|;&`]+)*)", code):
        words = match[1].split()
        if "--" in words:
            words = words[: words.index("--")]  # the rest is the command behind the tap
        command = words[0] if words and words[0] in _commands() else None
        if (
            command
            and len(words) > 1
            and re.search(rf"^    {re.escape(words[1])} ", _help(command), re.M)
        ):
            command = f"{command} {words[1]}"  # a command's own action (``trace report``)
        for word in words:
            flag = re.match(r"\[?(--[a-z][\w-]*)", word)
            if flag:
                found.append((command, flag[1]))
    return found


@pytest.mark.subprocess
@pytest.mark.parametrize("doc", DOCS, ids=[str(doc.relative_to(ROOT)) for doc in DOCS])
def test_every_acpwire_flag_named_exists(doc: Path) -> None:
    missing = [
        f"acpwire {command + ' ' if command else ''}{flag}"
        for code in _prose_code(doc)
        for command, flag in _flags(code)
        if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", _help(command))
    ]
    assert not missing, f"{doc.name}: flags `acpwire --help` does not list: {missing}"


# -- signatures written in LIBRARY.md ---------------------------------------------------


def _signatures() -> dict[str, Any]:
    import acp_v1
    import acpwire

    return {
        "spawn_agent": acpwire.spawn_agent,
        "AgentConnection": acpwire.AgentConnection,
        "ClientConnection": acpwire.ClientConnection,
        "serve": acpwire.serve,
        "run_stdio": acpwire.run_stdio,
        "run_turn": acpwire.BaseAgent.run_turn,
        "reply": acpwire.BaseAgent.reply,
        "compress": acpwire.BaseAgent.compress,
        "plan_command": acpwire.TurnHooks.plan_command,
        "run_command": acpwire.TurnHooks.run_command,
        "ToolStart": acpwire.ToolStart,
        "ToolEnd": acpwire.ToolEnd,
        "EditProposal": acpwire.EditProposal,
        "CommandProposal": acpwire.CommandProposal,
        "RpcError": acpwire.RpcError,
        "text_chunk": acpwire.text_chunk,
        "invalid_params": acpwire.invalid_params,
        "method_not_found": acpwire.method_not_found,
        "invalid_request": acpwire.invalid_request,
        "internal_error": acpwire.internal_error,
        "resource_not_found": acpwire.resource_not_found,
        "auth_required": acpwire.auth_required,
        "ext_request": acp_v1.AgentPeer.ext_request,
    }


def _shown(doc: Path, names: set[str]) -> list[tuple[str, list[str]]]:
    """(name, parameters) of each inline ``name(a, b, *, c=...)`` of ``doc`` whose items
    are all parameter names (a call with values, or with ``...``, is not a signature)."""
    shown = []
    for span in _prose_code(doc, shell_lines=False):
        for match in re.finditer(r"(?<![\w])(\w+)\(([^()]*)\)", " ".join(span.split())):
            if match[1] not in names:
                continue
            items = [item.strip() for item in match[2].split(",")] if match[2].strip() else []
            if all(item == "*" or re.fullmatch(r"[a-z_]\w*(=.+)?", item) for item in items):
                shown.append((match[1], items))
    return shown


def test_the_signatures_shown_are_true() -> None:
    # Keyword-only parameters after `*`, positional ones in order, no parameter invented.
    real = _signatures()
    shown = _shown(ROOT / "docs" / "LIBRARY.md", set(real))
    assert len({name for name, _ in shown}) >= 20  # the check sees the signatures
    wrong = []
    for name, items in shown:
        params = [p for p in inspect.signature(real[name]).parameters.values() if p.name != "self"]
        by_name = {p.name: p for p in params}
        positional = [p.name for p in params if p.kind is not p.KEYWORD_ONLY]
        star = items.index("*") if "*" in items else len(items)
        before = [item.split("=")[0] for item in items[:star]]
        after = [item.split("=")[0] for item in items[star + 1 :]]
        problems = [n for n in before + after if n not in by_name]
        if before != positional[: len(before)]:
            problems.append(f"positional {before} are not {positional}")
        problems += [f"{n} is keyword-only" for n in before if n in by_name and n not in positional]
        problems += [f"{n} is not keyword-only" for n in after if n in positional]
        if problems:
            wrong.append(f"{name}({', '.join(items)}): {'; '.join(problems)}")
    assert not wrong, wrong


def test_every_name_of_the_import_table_is_importable() -> None:
    # LIBRARY.md, "What you import": each row's names are attributes of its module.
    import importlib

    text = (ROOT / "docs" / "LIBRARY.md").read_text()
    section = text.split("## What you import", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([\w.]+)`[^|]*\| (.+) \|$", section, re.M)
    assert {module for module, _ in rows} == {"acpwire", "acpwire.rpc", "acp_v1", "acp_v1.models"}
    missing = [
        f"{module}.{name}"
        for module, names in rows
        for name in re.findall(r"`(\w+)`", names)
        if not hasattr(importlib.import_module(module), name)
    ]
    assert not missing, missing
