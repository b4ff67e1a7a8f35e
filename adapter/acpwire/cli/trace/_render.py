"""A trace's :class:`~acpwire.cli.trace._summary.Summary` as a page, Markdown or JSON.

The page is one self-contained HTML file: its style and script are inline, a Content
Security Policy forbids every fetch (it opens from a file, with no network), and every
text taken from the trace (prompts, code, what an agent sent) is escaped, since a trace
holds what an untrusted model and repository wrote. Messages expand with ``<details>``;
the small script only adds "expand all", the violations-only filter and the
``data-ready`` mark the tests read.
"""

from __future__ import annotations

import html
import json
from typing import Any

from acpwire.cli.trace._summary import CONNECTION, Message, Summary

__all__ = ["render_html", "render_json", "render_markdown"]

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2125;background:#f6f7f9}
header{background:#1d2b3a;color:#fff;padding:14px 24px}
header h1{font-size:18px;margin:0 0 4px}
main{padding:16px 24px;max-width:1200px}
section{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:12px 16px;margin:0 0 16px}
h2{font-size:15px;margin:0 0 10px}
.cards{display:flex;gap:12px;flex-wrap:wrap}
.card{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:10px 14px;min-width:130px}
.card b{display:block;font-size:22px}
.card.bad{border-color:#d33;background:#fff3f3}
table{border-collapse:collapse;width:100%}
td,th{text-align:left;padding:4px 8px;border-bottom:1px solid #eef0f2;vertical-align:top}
.side{display:grid;grid-template-columns:1fr 1fr;gap:12px}
pre{background:#f3f5f7;padding:8px;overflow:auto;max-height:420px;margin:6px 0;white-space:pre-wrap;word-break:break-all}
details.msg{border-left:4px solid #9aa5b1;margin:3px 0;padding:2px 8px;background:#fbfcfd}
details.msg.c2a{border-left-color:#2f6fdb}
details.msg.a2c{border-left-color:#1f9d55}
details.msg.violation{border-left-color:#d33;background:#fff3f3}
summary{cursor:pointer}
.t{color:#69737d;font-variant-numeric:tabular-nums;display:inline-block;width:80px}
.dir{display:inline-block;width:110px;white-space:nowrap;color:#69737d}
.v{color:#b00;font-weight:600}
.tools button{margin-right:8px}
body.only-violations details.msg:not(.violation){display:none}
"""

_SCRIPT = """
(function(){
  var all=document.querySelectorAll('details.msg');
  document.getElementById('expand').onclick=function(){all.forEach(function(d){d.open=true;});};
  document.getElementById('collapse').onclick=function(){all.forEach(function(d){d.open=false;});};
  document.getElementById('only').onclick=function(){document.body.classList.toggle('only-violations');};
  document.body.dataset.messages=String(all.length);
  document.body.dataset.violations=String(document.querySelectorAll('details.msg.violation').length);
  document.body.dataset.ready='1';
})();
"""

_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _pretty(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)


def _seconds(value: float | None) -> str:
    return "never answered" if value is None else f"{value * 1000:.1f} ms"


def _session_label(session: str) -> str:
    return "Connection (no session)" if session == CONNECTION else f"Session {session}"


def _message_html(message: Message) -> str:
    arrow = "client → agent" if message.direction == "client->agent" else "agent → client"
    classes = ["msg", "c2a" if message.direction == "client->agent" else "a2c"]
    if message.violations:
        classes.append("violation")
    name = message.method or f"({message.kind})"
    label = f"{name} {message.kind}" + ("" if message.id is None else f" #{message.id}")
    flags = "".join(
        f' <span class="v">⚠ {_e(v.get("rule", "violation"))}</span>' for v in message.violations
    )
    body = _pretty(message.body) if message.body is not None else message.raw
    notes = "".join(
        f'<p class="v">{_e(v.get("rule", ""))}: {_e(v.get("message", ""))}'
        + (f" ({_e(v['spec'])})" if v.get("spec") else "")
        + "</p>"
        for v in message.violations
    )
    return (
        f'<details class="{" ".join(classes)}" data-index="{message.index}"'
        f' data-direction="{_e(message.direction)}" data-method="{_e(name)}">'
        f'<summary><span class="t">{message.t:.3f} s</span><span class="dir">{arrow}</span>'
        f" {_e(label)}{flags}</summary>{notes}<pre>{_e(body)}</pre></details>"
    )


def _card(title: str, value: object, bad: bool = False) -> str:
    return f'<div class="card{" bad" if bad else ""}"><b>{_e(value)}</b>{_e(title)}</div>'


def render_html(summary: Summary) -> str:
    violations = summary.violations
    counts = summary.violation_counts()
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        f"<title>acpwire trace report: {_e(summary.source)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<header><h1>acpwire trace report</h1>{_e(summary.source)}</header><main>",
        '<div class="cards" id="cards">',
        _card("messages", len(summary.messages)),
        _card("sessions", len([s for s in summary.sessions if s != CONNECTION])),
        _card("violations", len(violations), bad=bool(violations)),
        _card("never answered", len(summary.unanswered), bad=bool(summary.unanswered)),
        _card("seconds", f"{summary.duration:.2f}"),
        "</div>",
        '<section id="handshake"><h2>Handshake</h2><div class="side">',
        f'<div><h3>Client</h3><pre id="client-side">{_e(_pretty(summary.client))}</pre></div>',
        f'<div><h3>Agent</h3><pre id="agent-side">{_e(_pretty(summary.agent))}</pre></div>',
        "</div></section>",
        '<section id="latency"><h2>Latency</h2><table><tr><th>what</th><th>session</th>'
        "<th>time</th><th></th></tr>",
        *(
            f"<tr><td>{_e(x.name)}</td><td>{_e(x.session or '-')}</td>"
            f"<td>{_e(_seconds(x.seconds))}</td><td>{_e(x.detail)}</td></tr>"
            for x in summary.latencies
        ),
        "</table></section>",
        f'<section id="violations"><h2>Violations ({len(violations)})</h2>',
    ]
    if counts:
        parts.append("<table><tr><th>rule</th><th>count</th></tr>")
        parts += [f"<tr><td>{_e(rule)}</td><td>{n}</td></tr>" for rule, n in counts.most_common()]
        parts.append("</table><ul>")
        parts += [
            f'<li class="v">{_e(v.get("rule", ""))}: {_e(v.get("message", ""))}'
            + ("" if m is None else f" (message {m.index}, {m.t:.3f} s)")
            + "</li>"
            for m, v in violations
        ]
        parts.append("</ul>")
    else:
        parts.append("<p>None reported.</p>")
    parts.append("</section>")
    parts.append(
        '<section id="timeline"><h2>Timeline</h2><p class="tools">'
        '<button id="expand">expand all</button><button id="collapse">collapse all</button>'
        '<button id="only">violations only</button></p>'
    )
    for session, messages in summary.sessions.items():
        parts.append(
            f'<div class="session" data-session="{_e(session)}">'
            f"<h3>{_e(_session_label(session))} ({_count(len(messages), 'message')})</h3>"
        )
        parts += [_message_html(m) for m in messages]
        parts.append("</div>")
    if summary.unreadable:
        parts.append(f"<p>{summary.unreadable} line(s) of the file were no trace record.</p>")
    parts.append(f"</section></main><script>{_SCRIPT}</script></body></html>")
    return "\n".join(parts) + "\n"


def _cell(value: object) -> str:
    """A JSON value as a Markdown table cell (pipes and backticks cannot end it)."""
    text = json.dumps(value, ensure_ascii=False).replace("|", "\\|").replace("`", "'")
    return f"`{text}`"


def _count(n: int, noun: str) -> str:
    """``1 message``, ``2 messages``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def render_markdown(summary: Summary) -> str:
    violations = summary.violations
    lines = [
        f"# acpwire trace report: {summary.source}",
        "",
        f"{_count(len(summary.messages), 'message')}, "
        f"{_count(len([s for s in summary.sessions if s != CONNECTION]), 'session')}, "
        f"{_count(len(violations), 'violation')}, {len(summary.unanswered)} never answered, "
        f"{summary.duration:.2f} s.",
        "",
        "## Handshake",
        "",
        "| | client | agent |",
        "|---|---|---|",
    ]
    for key_client, key_agent, name in (
        ("protocolVersion", "protocolVersion", "protocol version"),
        ("clientInfo", "agentInfo", "implementation"),
        ("clientCapabilities", "agentCapabilities", "capabilities"),
    ):
        mine, theirs = summary.client.get(key_client), summary.agent.get(key_agent)
        lines.append(f"| {name} | {_cell(mine)} | {_cell(theirs)} |")
    lines += ["", "## Latency", "", "| what | session | time | |", "|---|---|---|---|"]
    lines += [
        f"| {x.name} | {x.session or '-'} | {_seconds(x.seconds)} | {x.detail} |"
        for x in summary.latencies
    ]
    lines += ["", f"## Violations ({len(violations)})", ""]
    lines += [
        f"- **{v.get('rule', '')}**: {v.get('message', '')}"
        + (f" ({v['spec']})" if v.get("spec") else "")
        + ("" if m is None else f" (message {m.index}, {m.t:.3f} s)")
        for m, v in violations
    ] or ["None reported."]
    lines += ["", "## Timeline", ""]
    for session, messages in summary.sessions.items():
        lines += [f"### {_session_label(session)}", ""]
        lines += [
            f"- {m.t:.3f} s {m.direction} {m.method or '(' + m.kind + ')'} {m.kind}"
            + ("" if m.id is None else f" #{m.id}")
            + (" ⚠" if m.violations else "")
            for m in messages
        ]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def render_json(summary: Summary) -> str:
    data: dict[str, Any] = summary.as_json()
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
