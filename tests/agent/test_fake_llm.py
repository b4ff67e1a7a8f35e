"""The fake OpenAI-compatible server: model list, streaming shape, scripts, rules, script mode."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from tests.support.fake_llm import FakeLLM

SCRIPT = Path(__file__).resolve().parents[1] / "support" / "fake_llm.py"


def _stream(base_url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    chunks: list[dict[str, Any]] = []
    with httpx.stream(
        "POST", f"{base_url}/chat/completions", json={**body, "stream": True}
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in response.iter_lines() if line]
    assert lines[-1] == "data: [DONE]"
    for line in lines[:-1]:
        assert line.startswith("data: ")
        chunks.append(json.loads(line[len("data: ") :]))
    return chunks


def test_models_list() -> None:
    with FakeLLM(models=["alpha", "beta"]) as llm:
        body = httpx.get(f"{llm.base_url}/models").json()
    assert body["object"] == "list"
    assert [entry["id"] for entry in body["data"]] == ["alpha", "beta"]
    assert all(entry["object"] == "model" for entry in body["data"])


def test_streamed_text_reasoning_and_usage() -> None:
    reply = {
        "text": "hello world",
        "reasoning": "thinking",
        "chunks": 4,
        "usage": {"prompt_tokens": 7, "completion_tokens": 3},
    }
    with FakeLLM([reply]) as llm:
        chunks = _stream(
            llm.base_url,
            {
                "messages": [{"role": "user", "content": "hi"}],
                "stream_options": {"include_usage": True},
            },
        )
        recorded = llm.requests
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert "".join(d.get("content") or "" for d in deltas) == "hello world"
    assert sum(1 for d in deltas if d.get("content")) == 4
    assert "".join(d.get("reasoning_content", "") for d in deltas) == "thinking"
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    finishes = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
    assert finishes[-1] == "stop"
    # include_usage: a final chunk with no choices carries the usage.
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    assert recorded[0]["messages"] == [{"role": "user", "content": "hi"}]


def test_tool_calls_stream_id_and_name_first_then_argument_pieces() -> None:
    call = {"id": "call_a", "name": "read_file", "arguments": {"path": "some/long/file/name.txt"}}
    with FakeLLM([{"tool_calls": [call], "chunks": 3}]) as llm:
        chunks = _stream(llm.base_url, {"messages": [{"role": "user", "content": "x"}]})
    fragments = [
        c["choices"][0]["delta"]["tool_calls"][0]
        for c in chunks
        if c["choices"][0]["delta"].get("tool_calls")
    ]
    assert fragments[0]["id"] == "call_a"
    assert fragments[0]["function"] == {"name": "read_file", "arguments": ""}
    assert len(fragments) == 4
    assert all("id" not in f and "name" not in f["function"] for f in fragments[1:])
    assert json.loads("".join(f["function"]["arguments"] for f in fragments)) == call["arguments"]
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    # Without include_usage nothing extra follows the finish chunk.
    assert "usage" not in chunks[-1]


def test_non_streaming_completion() -> None:
    with FakeLLM(
        [{"text": "plain", "tool_calls": [{"id": "c1", "name": "todo", "arguments": "{}"}]}]
    ) as llm:
        body = httpx.post(f"{llm.base_url}/chat/completions", json={"messages": []}).json()
    assert body["object"] == "chat.completion"
    message = body["choices"][0]["message"]
    assert message["content"] == "plain"
    assert message["tool_calls"][0]["function"] == {"name": "todo", "arguments": "{}"}


def test_echo_when_script_is_empty_and_rules_win() -> None:
    with FakeLLM(rules=[{"match": "weather", "text": "sunny", "times": 1}]) as llm:
        first = _stream(llm.base_url, {"messages": [{"role": "user", "content": "what weather?"}]})
        second = _stream(
            llm.base_url,
            {
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "weather again"}]}
                ]
            },
        )

    def text(chunks: list[dict[str, Any]]) -> str:
        return "".join(
            c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"]
        )

    assert text(first) == "sunny"
    # The rule was used up (times=1), so the default echo answers.
    assert text(second) == "You said: weather again"


def test_http_error_status_and_push() -> None:
    with FakeLLM([{"status": 503, "body": {"error": {"message": "overloaded"}}}]) as llm:
        response = httpx.post(
            f"{llm.base_url}/chat/completions", json={"messages": [], "stream": True}
        )
        llm.push({"text": "later"})
        assert llm.pending() == 1
        assert llm.wait_for_requests(1, timeout=1)
    assert response.status_code == 503
    assert response.json() == {"error": {"message": "overloaded"}}


def test_runs_as_a_script(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"model": "scripted", "replies": [{"text": "from file"}]}))
    ready = tmp_path / "url.txt"
    process = subprocess.Popen(
        [
            sys.executable,
            str(SCRIPT),
            "--port",
            "0",
            "--script",
            str(script),
            "--ready-file",
            str(ready),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert "fake LLM listening on http://127.0.0.1:" in line
        base_url = line.strip().rsplit(" ", 1)[-1]
        assert ready.read_text().strip() == base_url
        assert httpx.get(f"{base_url}/models").json()["data"][0]["id"] == "scripted"
        chunks = _stream(base_url, {"messages": [{"role": "user", "content": "x"}]})
        assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks) == "from file"
    finally:
        process.terminate()
        stdout, _ = process.communicate(timeout=10)
    assert stdout == ""
