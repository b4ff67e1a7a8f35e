"""Envelope classification (default decoder) and envelope encoding."""

import json

import pytest
from pydantic import BaseModel, ConfigDict, Field

from acpwire.rpc import errors
from acpwire.rpc._strict import outline
from acpwire.rpc.messages import (
    ErrorResponse,
    InvalidMessage,
    Notification,
    Request,
    RequestId,
    Response,
    decode_message,
    encode_error,
    encode_notification,
    encode_request,
    encode_result,
    encode_value,
    leading_id,
)


class Chunk(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    session_id: str = Field(alias="sessionId")
    text: str
    note: str | None = None


def test_valid_messages() -> None:
    assert decode_message(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}') == Request(
        1, "m", {"a": 1}
    )
    assert decode_message(b'{"jsonrpc":"2.0","id":"x","method":"m"}') == Request("x", "m", None)
    assert decode_message(b'{"jsonrpc":"2.0","id":null,"method":"m","params":[1]}') == Request(
        None, "m", [1]
    )
    assert decode_message(b'{"jsonrpc":"2.0","method":"n"}') == Notification("n", None)
    assert decode_message(b'{"jsonrpc":"2.0","id":2,"result":null}') == Response(2, None)


def test_error_response() -> None:
    msg = decode_message(b'{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"auth"}}')
    assert isinstance(msg, ErrorResponse) and msg.id == 3
    assert (msg.error.code, msg.error.message) == (-32000, "auth")
    both = decode_message(b'{"jsonrpc":"2.0","id":3,"error":{},"result":1}')
    assert isinstance(both, ErrorResponse) and both.error.code == errors.INTERNAL_ERROR


@pytest.mark.parametrize(
    ("line", "code", "msg_id", "reply", "fragment"),
    [
        (b"{nope", -32700, None, True, "Parse error"),
        (b"\xff\xfe\x00garbage", -32700, None, True, "Parse error"),
        (b"[]", -32600, None, True, "batch"),
        (b'[{"jsonrpc":"2.0","id":1,"method":"m"}]', -32600, None, True, "batch"),
        (b"42", -32600, None, True, "expected a JSON object, got a number"),
        (b'"s"', -32600, None, True, "got a string"),
        (b'{"jsonrpc":"2.0","id":3}', -32600, 3, True, '"method"'),
        (b'{"jsonrpc":"1.0","id":4,"method":"m"}', -32600, 4, True, '"jsonrpc" must be "2.0"'),
        (b'{"id":4,"method":"m"}', -32600, 4, True, '"jsonrpc"'),
        (b'{"jsonrpc":"2.0","id":5,"method":7}', -32600, 5, True, '"method" must be a string'),
        (b'{"jsonrpc":"2.0","id":true,"method":"m"}', -32600, None, True, "got a boolean"),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"m"}', -32600, None, True, "got a number"),
        (b'{"jsonrpc":"2.0","id":{},"method":"m"}', -32600, None, True, "got an object"),
        (b'{"jsonrpc":"2.0","id":6,"method":"m","params":"x"}', -32600, 6, True, '"params"'),
        (b'{"jsonrpc":"2.0","id":null,"method":"m","params":1}', -32600, None, True, '"params"'),
        # Without an "id" member: a notification, whatever is wrong with it, never answered.
        (b'{"jsonrpc":"1.0","method":"m"}', -32600, None, False, '"jsonrpc"'),
        (b'{"method":"m"}', -32600, None, False, '"jsonrpc"'),
        (b'{"jsonrpc":"2.0","method":7}', -32600, None, False, '"method" must be a string'),
        (b'{"jsonrpc":"2.0","method":"m","params":"x"}', -32600, None, False, '"params"'),
        (b'{"jsonrpc":"2.0","params":{}}', -32600, None, False, '"method"'),
        (b"{}", -32600, None, False, "jsonrpc"),
        (b'{"jsonrpc":"2.0","result":1}', -32600, None, False, "needs an"),
        (b'{"jsonrpc":"1.0","id":1,"result":1}', -32600, 1, False, '"jsonrpc"'),
    ],
)
def test_invalid_messages(
    line: bytes, code: int, msg_id: object, reply: bool, fragment: str
) -> None:
    msg = decode_message(line)
    assert isinstance(msg, InvalidMessage)
    assert (msg.error.code, msg.id, msg.reply) == (code, msg_id, reply)
    assert fragment in msg.error.message


def test_encode_envelopes() -> None:
    assert encode_request(1, "a/b", {"k": "é"}) == (
        '{"jsonrpc":"2.0","id":1,"method":"a/b","params":{"k":"é"}}\n'.encode()
    )
    assert encode_request("x", "m") == b'{"jsonrpc":"2.0","id":"x","method":"m"}\n'
    assert encode_notification("n") == b'{"jsonrpc":"2.0","method":"n"}\n'
    assert encode_result(None, None) == b'{"jsonrpc":"2.0","id":null,"result":null}\n'
    assert encode_error(7, errors.request_cancelled()) == (
        b'{"jsonrpc":"2.0","id":7,"error":{"code":-32800,"message":"Request cancelled"}}\n'
    )


def test_models_are_spliced_by_alias_without_none() -> None:
    line = encode_notification("session/update", Chunk(session_id="s1", text="hi\nthere"))
    assert line == (
        b'{"jsonrpc":"2.0","method":"session/update",'
        b'"params":{"sessionId":"s1","text":"hi\\nthere"}}\n'
    )
    assert line.count(b"\n") == 1
    nested = encode_value({"items": [Chunk(session_id="s", text="t", note="n")]})
    assert json.loads(nested) == {"items": [{"sessionId": "s", "text": "t", "note": "n"}]}


def test_unencodable_values_raise() -> None:
    with pytest.raises(ValueError):
        encode_value(float("nan"))
    with pytest.raises(TypeError, match="not JSON serializable"):
        encode_value({"x": object()})


def test_lone_surrogates_round_trip_escaped() -> None:
    assert encode_value(["\ud800", "é"]) == b'["\\ud800","\\u00e9"]'
    line = encode_result("\udfff", None)
    assert decode_message(line.rstrip(b"\n")) == Response("\udfff", None)


def test_encoded_messages_decode_back() -> None:
    line = encode_request(9, "echo", {"text": "line1\nline2\u2028"})
    assert decode_message(line.rstrip(b"\n")) == Request(9, "echo", {"text": "line1\nline2\u2028"})


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":42,"method":"session/prompt","params":{"x"', (42, False)),
        (b' { "id" : "abc\\"d" , "params":[1', ('abc"d', False)),
        (b'{"jsonrpc":"2.0","method":"m","id":-3,"params":{', (-3, False)),
        # An "id" inside params is not the message's: nothing is told.
        (b'{"jsonrpc":"2.0","method":"x","params":{"id":5', (None, False)),
        (b'{"id":1.5,"method":"m"', (None, False)),  # not a valid id
        (b'{"id":true,', (None, False)),
        (b'{"id":12', (None, False)),  # the head ends inside the value
        (b'{"id":null,"method":"m"', (None, False)),
        (b'[{"id":1}]', (None, False)),
        (b"", (None, False)),
        # Answers to our requests: their ids are ours, not the peer's.
        (b'{"jsonrpc":"2.0","id":7,"result":{"content":"', (7, True)),
        (b'{"jsonrpc":"2.0","id":7,"error":{"code":', (7, True)),
    ],
)
def test_leading_id(head: bytes, expected: tuple[RequestId, bool]) -> None:
    assert leading_id(head) == expected


@pytest.mark.parametrize("depth", [202, 1_000, 100_000])
def test_deep_nesting_is_classified_by_what_can_be_read(depth: int) -> None:
    deep = b"[" * depth + b"]" * depth
    request = decode_message(b'{"jsonrpc":"2.0","id":9,"method":"m","params":{"a":' + deep + b"}}")
    assert isinstance(request, InvalidMessage) and request.id == 9 and request.reply
    assert request.error.code == errors.INVALID_PARAMS
    assert '"params" nested deeper than 200 levels' in request.error.message
    # The id may come last: the whole line is read, not its head.
    last = decode_message(b'{"jsonrpc":"2.0","method":"m","params":' + deep + b',"id":"z"}')
    assert isinstance(last, InvalidMessage) and (last.id, last.reply) == ("z", True)
    # A notification so nested is dropped; nobody is waiting for an answer.
    note = decode_message(b'{"jsonrpc":"2.0","method":"m","params":{"a":' + deep + b"}}")
    assert isinstance(note, InvalidMessage) and not note.reply
    assert note.error.code == errors.INVALID_PARAMS
    # An answer that deep fails the request of ours it answers; nobody answers it.
    answer = decode_message(b'{"jsonrpc":"2.0","id":4,"result":' + deep + b"}")
    assert isinstance(answer, ErrorResponse) and answer.id == 4
    assert answer.error.code == errors.INVALID_REQUEST
    bare = decode_message(deep)
    assert isinstance(bare, InvalidMessage) and (bare.id, bare.reply) == (None, True)
    assert bare.error.code == errors.INVALID_REQUEST
    # Brackets that never close (or a line cut off) are not JSON: no id is read from it.
    for cut in (b"[" * depth, b'{"jsonrpc":"2.0","id":9,"method":"m","params":' + deep[:-1]):
        unclosed = decode_message(cut)
        assert isinstance(unclosed, InvalidMessage) and (unclosed.id, unclosed.reply) == (
            None,
            True,
        )
        assert unclosed.error.code == errors.PARSE_ERROR


def test_deep_nesting_beside_a_lone_surrogate_escape_is_read_too() -> None:
    """The line ``json.loads`` would read (a lone surrogate escape) takes the same rules."""
    deep = b"[" * 300 + b"]" * 300
    line = b'{"jsonrpc":"2.0","id":"\\ud800","method":"m","params":[' + deep + b"]}"
    msg = decode_message(line)
    assert isinstance(msg, InvalidMessage) and msg.id == "\ud800"
    assert msg.error.code == errors.INVALID_PARAMS


def test_strict_json_yet_lone_surrogate_escapes_and_brackets_in_strings_decode() -> None:
    # 300 levels of brackets inside a string, next to a lone surrogate: json.loads' path.
    text = "[{" * 300 + "\ud800"
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "m", "params": [text]}).encode()
    assert decode_message(line) == Request(1, "m", [text])
    for bad in (b"[NaN]", b"[-Infinity]", b'["\xed\xa0\x80"]', '["a"]'.encode("utf-16")):
        msg = decode_message(bad)
        assert isinstance(msg, InvalidMessage) and msg.error.code == errors.PARSE_ERROR, bad


@pytest.mark.parametrize(
    "line",
    [
        b"[[[]]]",
        b' [ [ 1 , [ "[" , { "}" : [ ] } ] ] ] ',
        b'{"a": [ {}, [], 1, "x", {"b": [null, true, -0.5e3]} ] , "id" : "q"}',
        b"[1,[2,[]]]",
        b'[{"a":1,"b":[[],{},"x"]}]',
        b'{"k":"\\ud800\\"]","n":[1]}',
        b"[" * 300 + b"]" * 300,
        b'{"a":' * 300 + b"1" + b"}" * 300,
        b"[1," * 300 + b"2" + b"]" * 300,
        # Not JSON: each is refused
        b'{"a":[1,]}',
        b"[1 2]",
        b'{"a":1,}',
        b'{"a"}',
        b"[}",
        b'{"a":[}]}',
        b"[]]",
        b'{"a":[]]}',
        b'{"a":01}',
        b'{"a":["\x01"]}',
        b'{"a":[]} x',
        b"[1,[2,[],]]",
        b'[{"a":1,"b":}]',
        b'["\\x"]',
        b"[" * 300 + b"]" * 299,
        b"[" * 300 + b"]" * 301,
        b"[" * 300 + b"}" + b"]" * 299,
    ],
)
def test_outline_reads_what_json_reads(line: bytes) -> None:
    """The recursion-free reader accepts exactly the lines ``json.loads`` accepts (with
    room for its recursion), and empties what a top-level object's members hold."""
    try:
        expected: object = json.loads(line)
    except ValueError:
        with pytest.raises(ValueError):
            outline(line)
        return
    shape = outline(line)
    if isinstance(expected, dict):
        emptied = {k: type(v)() if isinstance(v, dict | list) else v for k, v in expected.items()}
        assert shape.value == emptied
    else:
        assert shape.value == []
