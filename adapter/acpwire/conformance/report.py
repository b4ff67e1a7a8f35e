"""A conformance run's report as text, Markdown, JSON or JUnit XML (docs/CHECK.md)."""

from __future__ import annotations

import json
from typing import Final, Literal
from xml.sax.saxutils import escape, quoteattr

from .run import RunReport

__all__ = ["FORMATS", "Format", "render"]

Format = Literal["text", "md", "json", "junit"]
FORMATS: Final[tuple[Format, ...]] = ("text", "md", "json", "junit")


def _agent_line(report: RunReport) -> str:
    agent = report.agent
    command = " ".join(str(part) for part in agent.get("command") or ())  # type: ignore[attr-defined]
    name = agent.get("name")
    said = f"{name} {agent.get('version')}" if name else "no agentInfo"
    return f"{command} ({said}, protocolVersion {agent.get('protocolVersion')})"


def _summary_line(report: RunReport) -> str:
    model = f"loopback model {report.model}" if report.model else "model-free"
    return (
        f"{report.count('PASS')} passed, {report.count('FAIL')} failed, "
        f"{report.count('SKIP')} skipped in {report.seconds:.1f} s ({model})"
    )


def _text(report: RunReport) -> str:
    width = max((len(check.name) for check in report.checks), default=10)
    lines = [f"acpwire check: {_agent_line(report)}"]
    for check in report.checks:
        lines.append(f"{check.status:<4}  {check.name:<{width}}  {check.evidence}")
        if check.status == "FAIL":
            lines.append(f"      {'':<{width}}  spec: {check.spec}")
    lines.append(_summary_line(report))
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md(report: RunReport) -> str:
    lines = [
        "# acpwire check",
        "",
        f"Agent: `{_cell(_agent_line(report))}`",
        "",
        "| check | status | evidence | spec |",
        "|---|---|---|---|",
    ]
    for check in report.checks:
        lines.append(
            f"| `{check.name}` | **{check.status}** | {_cell(check.evidence)} | "
            f"{_cell(check.spec)} |"
        )
    lines += ["", _summary_line(report)]
    return "\n".join(lines) + "\n"


def _junit(report: RunReport) -> str:
    attrs = (
        f'name="acpwire check" tests="{len(report.checks)}" '
        f'failures="{report.count("FAIL")}" skipped="{report.count("SKIP")}" '
        f'errors="0" time="{report.seconds:.3f}"'
    )
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', f"<testsuites {attrs}>"]
    lines.append(f"  <testsuite {attrs}>")
    lines.append("    <properties>")
    lines.append(f'      <property name="agent" value={quoteattr(_agent_line(report))}/>')
    lines.append("    </properties>")
    for check in report.checks:
        case = (
            f'    <testcase classname="acpwire.check" name={quoteattr(check.name)} '
            f'time="{check.seconds:.3f}"'
        )
        if check.status == "PASS":
            lines.append(case + ">")
            lines.append(f"      <system-out>{escape(check.evidence)}</system-out>")
        elif check.status == "SKIP":
            lines.append(case + ">")
            lines.append(f"      <skipped message={quoteattr(check.evidence)}/>")
        else:
            lines.append(case + ">")
            lines.append(
                f"      <failure message={quoteattr(check.evidence)} type={quoteattr(check.spec)}>"
                f"{escape(check.evidence)}\nspec: {escape(check.spec)}</failure>"
            )
        lines.append("    </testcase>")
    lines += ["  </testsuite>", "</testsuites>"]
    return "\n".join(lines) + "\n"


def render(report: RunReport, fmt: Format = "text") -> str:
    """The report in ``fmt``: ``text`` (one line a check), ``md`` (a table), ``json``
    (``{"checks": [{"name", "status", "evidence", "spec", "seconds"}], "agent",
    "summary"}``) or ``junit`` (JUnit XML, one testcase a check)."""
    if fmt == "json":
        return json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"
    if fmt == "md":
        return _md(report)
    if fmt == "junit":
        return _junit(report)
    return _text(report)
