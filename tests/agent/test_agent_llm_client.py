"""The streaming chat-completions client against the real fake server."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator

import pytest

from acpwire.agent.cancel import CancelToken
from acpwire.agent.embedded.llm import ChatClient, sse_lines
from acpwire.agent.embedded.stream import (
    ModelCancelled,
    ModelError,
    ModelReply,
    ReplyAssembler,
    SSEDecoder,
)
from tests.support.fake_llm import FakeLLM

USER = [{"role": "user", "content": "hi"}]


@pytest.fixture
def server() -> Iterator[FakeLLM]:
    with FakeLLM() as llm:
        yield llm


def _client(llm: FakeLLM) -> ChatClient:
    return ChatClient(llm.base_url, "sk-test", timeout=30)


def test_text_reasoning_usage_and_request_body(server: FakeLLM) -> None:
    server.push(
        {
            "text": "Hello there",
            "reasoning": "hmm",
            "usage": {"prompt_tokens": 11, "completion_tokens": 7},
        }
    )
    texts: list[str] = []
    thoughts: list[str] = []
    client = _client(server)
    try:
        reply = client.chat(
            model="fake-model",
            messages=USER,
            cancel=CancelToken(),
            tools=[
                {"type": "function", "function": {"name": "t", "parameters": {"type": "object"}}}
            ],
            temperature=0.2,
            on_text=texts.append,
            on_reasoning=thoughts.append,
        )
    finally:
        client.close()
    assert reply.text == "Hello there" == "".join(texts)
    assert len(texts) == 3
    assert reply.reasoning == "hmm" == "".join(thoughts)
    assert reply.finish_reason == "stop"
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (11, 7)
    body = server.requests[0]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["temperature"] == 0.2
    assert body["tools"][0]["function"]["name"] == "t"
    assert body["messages"] == USER


def test_tool_call_fragments_are_assembled(server: FakeLLM) -> None:
    server.push(
        {
            "tool_calls": [
                {"id": "call_1", "name": "read_file", "arguments": {"path": "a.txt"}},
                {"id": "call_2", "name": "terminal", "arguments": '{"command": "ls -la"}'},
            ],
            "chunks": 5,
        }
    )
    client = _client(server)
    try:
        reply = client.chat(model="m", messages=USER, cancel=CancelToken())
    finally:
        client.close()
    assert [(c.id, c.name) for c in reply.tool_calls] == [
        ("call_1", "read_file"),
        ("call_2", "terminal"),
    ]
    assert reply.tool_calls[0].arguments == '{"path": "a.txt"}'
    assert reply.tool_calls[1].arguments == '{"command": "ls -la"}'
    assert reply.finish_reason == "tool_calls"


def test_http_error_becomes_model_error(server: FakeLLM) -> None:
    server.push({"status": 500, "body": {"error": {"message": "boom inside"}}})
    client = _client(server)
    try:
        with pytest.raises(ModelError) as caught:
            client.chat(model="m", messages=USER, cancel=CancelToken())
    finally:
        client.close()
    assert caught.value.status == 500
    assert "HTTP 500" in caught.value.message and "boom inside" in caught.value.message


def test_connection_refused_becomes_model_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = ChatClient(f"http://127.0.0.1:{port}/v1", None, timeout=5)
    try:
        with pytest.raises(ModelError, match="cannot reach the model server"):
            client.chat(model="m", messages=USER, cancel=CancelToken())
    finally:
        client.close()


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("data: {not json\n\n", "malformed JSON"),
        (
            'data: {"choices": [{"index": 0, "delta": {"content": "par"}}]}\n\n',
            "ended before the reply was complete",
        ),
    ],
    ids=["malformed-json", "cut-short"],
)
def test_a_broken_stream_becomes_model_error(server: FakeLLM, raw: str, message: str) -> None:
    server.push({"raw": raw})
    client = _client(server)
    try:
        with pytest.raises(ModelError, match=message):
            client.chat(model="m", messages=USER, cancel=CancelToken())
    finally:
        client.close()


def test_usage_in_the_finish_chunk_is_read(server: FakeLLM) -> None:
    raw = (
        'data: {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": null}]}\n\n'
        'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}],'
        ' "usage": {"prompt_tokens": 5, "completion_tokens": 2,'
        ' "completion_tokens_details": {"reasoning_tokens": 1}, "prompt_tokens_details": {"cached_tokens": 4}}}\n\n'
        "data: [DONE]\n\n"
    )
    server.push({"raw": raw})
    client = _client(server)
    try:
        reply = client.chat(model="m", messages=USER, cancel=CancelToken())
    finally:
        client.close()
    assert reply.finish_reason == "length"
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (5, 2)
    assert (reply.usage.reasoning_tokens, reply.usage.cached_read_tokens) == (1, 4)


def _chat_in_thread(
    client: ChatClient, cancel: CancelToken, first: threading.Event
) -> tuple[threading.Thread, list[object]]:
    outcome: list[object] = []

    def target() -> None:
        try:
            outcome.append(
                client.chat(model="m", messages=USER, cancel=cancel, on_text=lambda _t: first.set())
            )
        except (ModelCancelled, ModelError) as exc:
            outcome.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, outcome


def test_cancel_stops_a_slow_stream_promptly(server: FakeLLM) -> None:
    # 150 chunks, 0.2 s apart: about 30 s if the cancel did not work.
    server.push({"text": "x" * 150, "chunks": 150, "delay": 0.2})
    client = _client(server)
    cancel = CancelToken()
    first = threading.Event()
    thread, outcome = _chat_in_thread(client, cancel, first)
    try:
        assert first.wait(10)
        cancel.cancel()
        thread.join(timeout=5)
        assert not thread.is_alive()
        assert isinstance(outcome[0], ModelCancelled)
    finally:
        client.close()


def test_cancel_before_the_response_headers(server: FakeLLM) -> None:
    server.push({"text": "late", "initial_delay": 30})
    client = _client(server)
    cancel = CancelToken()
    thread, outcome = _chat_in_thread(client, cancel, threading.Event())
    try:
        assert server.wait_for_requests(1, timeout=10)
        cancel.cancel()
        thread.join(timeout=5)
        assert not thread.is_alive()
        assert isinstance(outcome[0], ModelCancelled)
    finally:
        client.close()


def test_cancelled_token_refuses_to_start(server: FakeLLM) -> None:
    cancel = CancelToken()
    cancel.cancel()
    client = _client(server)
    try:
        with pytest.raises(ModelCancelled):
            client.chat(model="m", messages=USER, cancel=cancel)
    finally:
        client.close()
    assert server.requests == []


def test_assembler_accepts_server_variants() -> None:
    assembler = ReplyAssembler()
    chunks = [
        {"choices": [{"index": 0, "delta": {"reasoning": "think "}}]},
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "x",
                                "function": {"name": "todo", "arguments": {"todos": []}},
                            }
                        ]
                    },
                }
            ]
        },
        # Some servers repeat the name with every fragment.
        {
            "choices": [
                {"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"name": "todo"}}]}}
            ]
        },
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {"index": 1, "function": {"name": "read_file", "arguments": "{}"}}
                        ]
                    },
                }
            ]
        },
        {"choices": [{"index": 0, "message": {"content": "whole"}, "finish_reason": "tool_calls"}]},
    ]
    for chunk in chunks:
        assembler.feed_chunk(chunk)
    reply: ModelReply = assembler.result()
    assert reply.reasoning == "think "
    assert reply.text == "whole"
    assert [c.name for c in reply.tool_calls] == ["todo", "read_file"]
    assert reply.tool_calls[0].arguments == '{"todos": []}'
    assert reply.tool_calls[1].id.startswith("call_")  # generated when the server sent none


def test_assembler_raises_on_error_chunk() -> None:
    with pytest.raises(ModelError, match="rate limited"):
        ReplyAssembler().feed_chunk({"error": {"message": "rate limited"}})


def test_sse_decoder_joins_data_lines_and_ignores_comments() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(": keep-alive") is None
    assert decoder.feed("event: message") is None
    assert decoder.feed('data: {"a":') is None
    assert decoder.feed("data: 1}") is None
    assert decoder.feed("") == '{"a":\n1}'
    assert decoder.feed("data: [DONE]") is None
    assert decoder.feed("") is None
    assert decoder.done


def test_every_client_shares_one_verifying_tls_context() -> None:
    import ssl

    from acpwire.agent.embedded.tls import tls_context

    context = tls_context()
    assert context is tls_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


def test_raw_line_separators_inside_json_strings_do_not_split_the_stream(server: FakeLLM) -> None:
    """JSON may carry U+2028, U+2029 and U+0085 unescaped (llama.cpp, vLLM do): an event
    stream line ends only at CR, LF or CRLF."""
    text = "one\u2028two\u2029three\u0085four"
    body = json.dumps({"choices": [{"index": 0, "delta": {"content": text}}]}, ensure_ascii=False)
    finish = json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    server.push({"raw": f"data: {body}\r\n\r\ndata: {finish}\n\ndata: [DONE]\n\n"})
    client = _client(server)
    try:
        reply = client.chat(model="m", messages=USER, cancel=CancelToken())
    finally:
        client.close()
    assert reply.text == text


def test_sse_lines_split_only_at_cr_lf_and_crlf() -> None:
    chunks = ["data: a\u2028b\n", "x\r", "\ny\rz\n\n", "tail\r"]
    assert list(sse_lines(chunks)) == ["data: a\u2028b", "x", "y", "z", "", "tail"]


def test_parallel_calls_sent_at_one_index_stay_apart() -> None:
    """Ollama sends parallel tool calls all at ``index`` 0, told apart by their ids."""
    assembler = ReplyAssembler()

    def call(call_id: str, name: str, path: str) -> dict[str, object]:
        fragment = {
            "index": 0,
            "id": call_id,
            "function": {"name": name, "arguments": json.dumps({"path": path})},
        }
        return {"choices": [{"index": 0, "delta": {"tool_calls": [fragment]}}]}

    for chunk in (call("call_1", "read_file", "a.txt"), call("call_2", "read_file", "b.txt")):
        assembler.feed_chunk(chunk)
    assembler.feed_chunk({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    calls = assembler.result().tool_calls
    assert [(c.id, c.name, json.loads(c.arguments)) for c in calls] == [
        ("call_1", "read_file", {"path": "a.txt"}),
        ("call_2", "read_file", {"path": "b.txt"}),
    ]
