"""Hostile lines on the real stdin: each gets its own JSON-RPC code, none runs, none -32603.

Nesting from 1,000 to 100,000 levels (bare, in ``params``, in a prompt block's ``_meta``,
in the canonical-order notification the decoder's fast path reads, never closed; a
notification so nested is dropped unanswered), a complete object followed by junk,
``NaN``/``Infinity``, surrogates encoded in UTF-8 bytes, a UTF-16 line, boolean ids, and
lone surrogates in ids and paths. The junk and boolean-id cases are also
sent while a turn waits for a permission: a ``session/cancel`` with junk behind it must
not cancel the turn, and an answer with ``"id": false`` must not answer request 0.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.stdio.stdio_support import (
    ACPWIRE,
    STEP_TIMEOUT,
    JsonObject,
    RawPeer,
    child_env,
    closed_port,
    destructive_command_turn,
    parse_lines,
    raw_child,
    write_home,
)
from tests.support.fake_llm import FakeLLM

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]


def _line(message: str) -> bytes:
    return message.encode("utf-8", "surrogatepass") + b"\n"


def _deep(depth: int, kind: str) -> str:
    if kind == "array":
        return "[" * depth + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


def _request(msg_id: object, method: str, params_json: str) -> str:
    return (
        f'{{"jsonrpc":"2.0","id":{json.dumps(msg_id)},"method":"{method}","params":{params_json}}}'
    )


def _cancel(sid: str, extra: str = "") -> str:
    """A ``session/cancel`` in canonical key order: what the decoder's fast path reads."""
    return f'{{"jsonrpc":"2.0","method":"session/cancel","params":{{"sessionId":"{sid}"{extra}}}}}'


def _junk_variants(line: str) -> list[str]:
    """A complete object with junk after it; or its final brace replaced by junk."""
    return [line + "X", line[:-1] + "]", line[:-1] + ",", line[:-1] + '"', line + " }"]


NESTED: list[tuple[str, tuple[object, int] | None]] = [
    # (line, (id, code) of its answer, or None: a notification, never answered)
    (_deep(1_000, "array"), (None, -32600)),
    (_deep(100_000, "array"), (None, -32600)),
    (_deep(1_000, "object"), None),
    (_request(101, "session/list", '{"_meta":' + _deep(1_000, "array") + "}"), (101, -32602)),
    (
        _request(
            102,
            "session/new",
            '{"cwd":"/tmp","mcpServers":[],"_meta":' + _deep(100_000, "object") + "}",
        ),
        (102, -32602),
    ),
    (
        _request(
            103,
            "session/prompt",
            '{"sessionId":"s","prompt":[{"type":"text","text":"hi","_meta":{"x":'
            + _deep(5_000, "array")
            + "}}]}",
        ),
        (103, -32602),
    ),
    (_cancel("s", ',"_meta":' + _deep(1_000, "array")), None),
    (_cancel("s", ',"_meta":' + _deep(50_000, "object")), None),
    ("[" * 100_000, (None, -32700)),
    (_request(104, "session/list", '{"_meta":' + "[" * 5_000), (None, -32700)),
]

NOT_JSON: list[str] = [
    *_junk_variants(_request(201, "session/new", '{"cwd":"/tmp","mcpServers":[]}')),
    *_junk_variants(_cancel("s")),
    _request(202, "session/list", '{"_meta":{"n":NaN}}'),
    _request(203, "session/list", '{"_meta":{"n":Infinity}}'),
    _request(204, "session/list", '{"_meta":{"n":-Infinity}}'),
    _cancel("s", ',"_meta":{"n":NaN}'),
]

BOOL_IDS: list[str] = [
    _request(True, "session/list", "{}"),
    _request(False, "session/new", '{"cwd":"/tmp","mcpServers":[]}'),
    _request(True, "session/prompt", '{"sessionId":"s","prompt":[]}'),
    _request(False, "session/cancel", '{"sessionId":"s"}'),
]

SURROGATES: list[tuple[str, int]] = [
    (_request(301, "session/new", '{"cwd":"/tmp/\\ud800","mcpServers":[]}'), -32602),
    (_request(302, "session/resume", '{"cwd":"/tmp/\\ud800","sessionId":"s"}'), -32602),
    (_request(303, "session/close", '{"sessionId":"\\ud800"}'), -32002),
    (_request(304, "session/delete", '{"sessionId":"\\ud800"}'), -32002),
]


async def _error(peer: RawPeer) -> JsonObject:
    message = await peer.next_message()
    assert "error" in message, message
    return message


async def test_nested_non_json_and_odd_id_lines_get_their_codes(tmp_path: Path) -> None:
    home = write_home(tmp_path / "home", f"http://127.0.0.1:{closed_port()}/v1")
    stderr_path = tmp_path / "stderr.log"
    cesu = b'{"jsonrpc":"2.0","id":401,"method":"session/new","params":{"cwd":"/tmp/\xed\xa0\x80","mcpServers":[]}}\n'
    utf16 = _request(402, "session/list", "{}").encode("utf-16") + b"\n"
    async with raw_child(ACPWIRE, env=child_env(home), stderr_path=stderr_path) as peer:
        with anyio.fail_after(STEP_TIMEOUT * 3):
            init = await peer.call("initialize", {"protocolVersion": 1})
            assert init["result"]["protocolVersion"] == 1
            for line, expected in NESTED:
                before = len(peer.lines)
                await peer.send_bytes(_line(line))
                if expected is None:  # nothing written for it: the next answer is the list's
                    assert "result" in await peer.call("session/list", {}), line[:80]
                    assert len(peer.lines) == before + 1, line[:80]
                    continue
                answer = await _error(peer)
                assert (answer["id"], answer["error"]["code"]) == expected, line[:80]
                if expected[1] != -32700:
                    assert "nested deeper than 200" in answer["error"]["message"]
            for line in NOT_JSON:
                await peer.send_bytes(_line(line))
                answer = await _error(peer)
                assert (answer["id"], answer["error"]["code"]) == (None, -32700), line
            for raw in (cesu, utf16):
                await peer.send_bytes(raw)
                answer = await _error(peer)
                assert (answer["id"], answer["error"]["code"]) == (None, -32700), raw
            for line in BOOL_IDS:
                await peer.send_bytes(_line(line))
                answer = await _error(peer)
                assert (answer["id"], answer["error"]["code"]) == (None, -32600), line
                assert "boolean" in answer["error"]["message"]
            for line, code in SURROGATES:
                await peer.send_bytes(_line(line))
                answer = await _error(peer)
                assert answer["error"]["code"] == code, (line, answer)
                assert answer["id"] == json.loads(line)["id"]
            again = await peer.call("session/list", {})
        assert await peer.finish() == 0

    assert again["result"]["sessions"] == []
    messages = parse_lines(peer.lines)
    assert all(m.get("error", {}).get("code") != -32603 for m in messages)
    # Nothing ran: no session/new of all those lines created a session.
    with sqlite3.connect(home / "sessions.db") as db:
        assert db.execute("SELECT COUNT(*) FROM sessions").fetchone() == (0,)
    assert "Traceback" not in stderr_path.read_text(encoding="utf-8")


def _option(request: JsonObject, kind: str) -> str:
    options: list[dict[str, Any]] = request["params"]["options"]
    return next(str(o["optionId"]) for o in options if o["kind"] == kind)


async def test_junk_behind_a_cancel_and_a_boolean_id_answer_change_nothing(tmp_path: Path) -> None:
    work, script = destructive_command_turn(tmp_path)
    stderr_path = tmp_path / "stderr.log"
    with FakeLLM(script) as llm:
        home = write_home(tmp_path / "home", llm.base_url)
        async with raw_child(
            ACPWIRE, env=child_env(home), stderr_path=stderr_path, answer=lambda _: None
        ) as peer:
            with anyio.fail_after(STEP_TIMEOUT):
                await peer.call("initialize", {"protocolVersion": 1})
                new = await peer.call("session/new", {"cwd": str(work), "mcpServers": []})
                sid = new["result"]["sessionId"]
                prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "clean up"}]}
                await peer.send(
                    {"jsonrpc": "2.0", "id": 50, "method": "session/prompt", "params": prompt}
                )
                ask = await peer.wait_for(lambda m: m.get("method") == "session/request_permission")
                assert ask["id"] in (0, 1)
                # A cancel nested too deeply is a notification: dropped, not answered (the
                # first error out is the next line's).
                await peer.send_bytes(_line(_cancel(sid, ',"_meta":' + _deep(2_000, "array"))))
                lines = [*_junk_variants(_cancel(sid)), _cancel(sid, ',"_meta":{"n":NaN}')]
                for line in lines:
                    await peer.send_bytes(_line(line))
                    answer = await _error(peer)
                    assert (answer["id"], answer["error"]["code"]) == (None, -32700), line
                # "id": false (or true) is not request 0 (or 1): this refusal answers nothing.
                bogus = {
                    "outcome": {"outcome": "selected", "optionId": _option(ask, "reject_once")}
                }
                await peer.send({"jsonrpc": "2.0", "id": bool(ask["id"]), "result": bogus})
                allow = {"outcome": {"outcome": "selected", "optionId": _option(ask, "allow_once")}}
                await peer.send({"jsonrpc": "2.0", "id": ask["id"], "result": allow})
                done = await peer.wait_for(lambda m: m.get("id") == 50)
            assert await peer.finish() == 0

    assert done["result"]["stopReason"] == "end_turn"  # no junk line cancelled it
    assert (work / "ran").exists() and not (work / "victim").exists()
    messages = parse_lines(peer.lines)
    assert all(m.get("error", {}).get("code") != -32603 for m in messages)
