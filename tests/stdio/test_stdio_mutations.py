"""Every agent-side method of the schema, mutated, through the real process over stdio.

The cases come from :mod:`tests.stdio.mutations` (required fields dropped, null, wrong
types, huge and odd strings, out-of-range numbers, params of the wrong shape, ids of
the wrong type). Asserted: the process keeps serving and exits 0 at end of input, stdout
holds JSON-RPC messages only, every request with a valid id gets exactly one answer, an
id of the wrong type gets -32600 with id null, a notification (params of the wrong shape
included) gets none, and nothing is ever answered -32603.

The soak test sends the corpus round after round and reads the process's resident
memory from ``/proc``: after a warm-up round it must stay flat (a generous bound), so
nothing a hostile client sends accumulates.
"""

from __future__ import annotations

import sys
from collections import Counter
from functools import partial
from pathlib import Path

import anyio
import pytest

from tests.stdio.mutations import Case, mutation_lines
from tests.stdio.stdio_support import (
    ACPWIRE,
    JsonObject,
    RawPeer,
    child_env,
    closed_port,
    parse_lines,
    raw_child,
    write_home,
)

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess, pytest.mark.timeout(240)]

CASES = list(mutation_lines())
RUN_TIMEOUT = 200.0
"""Bound for a whole round (about 800 cases, 27 MiB of input)."""


async def _send_all(peer: RawPeer, cases: list[Case]) -> list[JsonObject]:
    """Send each case and wait for the answer it must get; the answers, in order."""
    answers: list[JsonObject] = []
    for case in cases:
        await peer.send_bytes(case.line + b"\n")
        if case.msg_id is not None:
            answers.append(await peer.wait_for(partial(_answers, case.msg_id)))
        elif case.null_answer:
            answers.append(await peer.wait_for(partial(_answers, None)))
    return answers


async def _big_sessions(peer: RawPeer, cwd: Path, count: int = 12) -> list[str]:
    """Sessions whose history holds a 1 MiB prompt (the model is unreachable: the turn
    ends with an error message); an editor that never closes them."""
    authenticated = await peer.call("authenticate", {"methodId": "acpwire-setup"})
    assert "result" in authenticated, authenticated  # the corpus logged out
    made: list[str] = []
    for _ in range(count):
        new = await peer.call("session/new", {"cwd": str(cwd), "mcpServers": []})
        made.append(new["result"]["sessionId"])
        prompt = [{"type": "text", "text": "big " * (256 * 1024)}]
        answer = await peer.call("session/prompt", {"sessionId": made[-1], "prompt": prompt})
        assert answer["result"]["stopReason"] == "end_turn", answer
    return made


def _answers(msg_id: int | None, message: JsonObject) -> bool:
    return "method" not in message and message.get("id") == msg_id


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


async def test_schema_mutations_of_every_agent_method_get_one_proper_answer_each(
    tmp_path: Path,
) -> None:
    home = write_home(tmp_path / "home", f"http://127.0.0.1:{closed_port()}/v1")
    stderr_path = tmp_path / "stderr.log"
    async with raw_child(ACPWIRE, env=child_env(home), stderr_path=stderr_path) as peer:
        with anyio.fail_after(RUN_TIMEOUT):
            await peer.call("initialize", {"protocolVersion": 1})
            answers = await _send_all(peer, CASES)
            alive = await peer.call("session/list", {})
        assert peer.process.returncode is None and "result" in alive
        assert await peer.finish() == 0

    messages = parse_lines(peer.lines)  # stdout: JSON-RPC only
    responses = [m for m in messages if "method" not in m]
    counts = Counter(m.get("id") for m in responses)
    valid = [c.msg_id for c in CASES if c.msg_id is not None]
    assert all(counts[i] == 1 for i in valid), [i for i in valid if counts[i] != 1][:10]
    assert counts[None] == sum(c.null_answer for c in CASES)
    assert all(a["error"]["code"] == -32600 for a in answers if a.get("id") is None)
    codes = Counter(m["error"]["code"] for m in responses if "error" in m)
    assert -32603 not in codes, codes
    assert "Traceback" not in stderr_path.read_text(encoding="utf-8")


@pytest.mark.timeout(300)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_memory_stays_flat_over_rounds_of_hostile_input(tmp_path: Path) -> None:
    work = (tmp_path / "work").resolve()
    work.mkdir()
    home = write_home(tmp_path / "home", f"http://127.0.0.1:{closed_port()}/v1")
    async with raw_child(ACPWIRE, env=child_env(home), stderr_path=tmp_path / "stderr.log") as peer:
        with anyio.fail_after(280):
            await peer.call("initialize", {"protocolVersion": 1})
            first: list[str] = []
            for _ in range(3):  # warm-up: imports, caches, allocator pools, the session cap
                await _send_all(peer, CASES)
                first += await _big_sessions(peer, work)
            warm = _rss_kib(peer.process.pid)
            for _ in range(3):
                await _send_all(peer, CASES)
                await _big_sessions(peer, work)
            after = _rss_kib(peer.process.pid)
            # The first session, long unloaded from memory, is restored on use.
            since = len(peer.messages)
            load = {"sessionId": first[0], "cwd": str(work), "mcpServers": []}
            assert "result" in await peer.call("session/load", load)
        assert await peer.finish() == 0
        replayed = [
            m["params"]["update"]["sessionUpdate"]
            for m in peer.messages[since:]
            if m.get("method") == "session/update" and m["params"]["sessionId"] == first[0]
        ]
        assert replayed[0] == "user_message_chunk"
    # A resource bound, not a timing one: three more rounds (80 MiB of bad input, 36 more
    # sessions holding 1 MiB prompts, none closed) may not grow the process by more than
    # a quarter of its warm size, or 24 MiB.
    print(f"RSS after warm-up {warm} KiB, three rounds later {after} KiB")
    assert after - warm < max(warm // 4, 24 * 1024), (warm, after)
