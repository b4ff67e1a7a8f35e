"""The bindings under ``mypy --strict``: a downstream agent and a client narrowing
updates type-check, and wrong handler signatures, field types, open-enum typos, misused
catch-alls and handlers of the wrong role are caught at the marked lines.

One mypy run covers all the files (mypy is the slow part); each test reads its share.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.generated.schema_facts import ROOT

FIXTURES = ROOT / "tests" / "fixtures"
DOWNSTREAM = FIXTURES / "downstream_agent.py"
GOOD = {path.name: path for path in (DOWNSTREAM, FIXTURES / "typed_client.py")}
BAD = {
    name: FIXTURES / "mypy_bad" / name
    for name in (
        "bad_catch_all.py",
        "bad_handler.py",
        "bad_model.py",
        "bad_open_enum.py",
        "bad_role.py",
    )
}

ERROR = re.compile(
    r"^(?P<path>[^:\n]+):(?P<line>\d+): error: (?P<message>.*?)  \[(?P<code>[a-z-]+)\]$"
)
MARKER = re.compile(r"#\s*expect:\s*(?P<code>[a-z-]+)\s*$")


@dataclass(frozen=True)
class MypyRun:
    returncode: int
    output: str
    errors: dict[Path, list[tuple[int, str, str]]]
    """file -> [(line, code, message)]"""


@pytest.fixture(scope="module")
def mypy_run(tmp_path_factory: pytest.TempPathFactory) -> MypyRun:
    cache = tmp_path_factory.mktemp("mypy-cache")
    files = [*GOOD.values(), *BAD.values()]
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--config-file", "pyproject.toml",
         "--cache-dir", str(cache), "--no-pretty", "--no-color-output",
         *(str(f.relative_to(ROOT)) for f in files)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )  # fmt: skip
    output = proc.stdout + proc.stderr
    # 0 or 1 are verdicts; anything else means mypy itself failed to run.
    assert proc.returncode in (0, 1), output
    assert f"{len(files)} source files" in output, output
    errors: dict[Path, list[tuple[int, str, str]]] = defaultdict(list)
    for line in proc.stdout.splitlines():
        match = ERROR.match(line)
        if match:
            path = (ROOT / match["path"]).resolve()
            errors[path].append((int(match["line"]), match["code"], match["message"]))
    return MypyRun(proc.returncode, output, dict(errors))


def _expected(path: Path) -> set[tuple[int, str]]:
    marks = set()
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        match = MARKER.search(text)
        if match:
            marks.add((number, match["code"]))
    return marks


@pytest.mark.parametrize("name", sorted(GOOD))
def test_good_fixture_passes_mypy_strict(mypy_run: MypyRun, name: str) -> None:
    errors = mypy_run.errors.get(GOOD[name].resolve(), [])
    assert errors == [], "\n".join(f"{name}:{n}: [{c}] {msg}" for n, c, msg in errors)


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_fixture_fails_at_the_marked_lines(mypy_run: MypyRun, name: str) -> None:
    path = BAD[name]
    expected = _expected(path)
    assert expected, f"{name} has no '# expect:' markers"
    reported = mypy_run.errors.get(path.resolve(), [])
    assert mypy_run.returncode == 1
    got = {(n, code) for n, code, _ in reported}
    detail = "\n".join(f"{name}:{n}: [{c}] {msg}" for n, c, msg in reported)
    assert sorted(got) == sorted(expected), f"mypy reported:\n{detail or '(nothing)'}"


def test_expect_markers_are_parsed() -> None:
    match = MARKER.search("x = f(5)  # expect: arg-type")
    assert match is not None
    assert match["code"] == "arg-type"
    assert MARKER.search("x = f(5)  # fine") is None
