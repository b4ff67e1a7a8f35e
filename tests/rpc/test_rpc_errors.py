"""Error objects and the exception → JSON-RPC error mapping."""

import logging
import traceback

import anyio
import pytest
from pydantic import BaseModel, ValidationError

from acpwire.rpc import errors
from acpwire.rpc.errors import RpcError, error_from_exception


class Point(BaseModel):
    x: int
    y: int
    label: str


def validation_error(data: object) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        Point.model_validate(data)
    return info.value


def test_constants_match_the_spec() -> None:
    assert (errors.PARSE_ERROR, errors.INVALID_REQUEST, errors.METHOD_NOT_FOUND) == (
        -32700,
        -32600,
        -32601,
    )
    assert (errors.INVALID_PARAMS, errors.INTERNAL_ERROR, errors.REQUEST_CANCELLED) == (
        -32602,
        -32603,
        -32800,
    )
    assert (errors.AUTH_REQUIRED, errors.RESOURCE_NOT_FOUND) == (-32000, -32002)


def test_to_json_omits_missing_data() -> None:
    assert RpcError(-1, "m").to_json() == {"code": -1, "message": "m"}
    assert RpcError(-1, "m", {"k": 1}).to_json() == {"code": -1, "message": "m", "data": {"k": 1}}


def test_constructors() -> None:
    err = errors.method_not_found("x/y")
    assert (err.code, err.message, err.data) == (-32601, "Method not found: x/y", {"method": "x/y"})
    assert errors.request_cancelled().to_json() == {"code": -32800, "message": "Request cancelled"}
    assert errors.resource_not_found("file:///a").code == -32002
    assert errors.auth_required().code == -32000
    assert errors.internal_error().message == "Internal error"


def test_from_json_accepts_valid_and_tolerates_malformed() -> None:
    good = RpcError.from_json({"code": -32001, "message": "nope", "data": [1]})
    assert (good.code, good.message, good.data) == (-32001, "nope", [1])
    for bad in ["text", {"code": "x", "message": "m"}, {"code": True, "message": "m"}, None]:
        err = RpcError.from_json(bad)
        assert err.code == errors.INTERNAL_ERROR
        assert err.message.startswith("Malformed error object from peer")


def test_rpc_error_passes_through_unchanged() -> None:
    original = errors.invalid_params("bad cwd")
    assert error_from_exception(original) is original


def test_validation_error_becomes_short_invalid_params() -> None:
    err = error_from_exception(validation_error({"x": "a"}))
    assert err.code == errors.INVALID_PARAMS
    assert err.message == (
        "Invalid params: x: Input should be a valid integer, unable to parse string as an "
        "integer; y: Field required; label: Field required"
    )
    assert err.data is None


def test_validation_error_reports_at_most_three_errors() -> None:
    exc = validation_error([{"x": "a"}])  # wrong top-level type: one error
    assert error_from_exception(exc).message.startswith("Invalid params: Input should be")

    class Many(BaseModel):
        a: int
        b: int
        c: int
        d: int
        e: int

    with pytest.raises(ValidationError) as info:
        Many.model_validate({})
    message = error_from_exception(info.value).message
    assert message == (
        "Invalid params: a: Field required; b: Field required; c: Field required (and 2 more)"
    )
    assert "pydantic" not in message and "http" not in message


def test_validation_error_with_nested_location_and_long_message_is_clipped() -> None:
    class Inner(BaseModel):
        items: list[int]

    with pytest.raises(ValidationError) as info:
        Inner.model_validate({"items": [1, "x" * 1000]})
    message = error_from_exception(info.value).message
    assert message.startswith("Invalid params: items.1: Input should be a valid integer")
    assert len(message) < 250


def test_unexpected_exception_is_internal_error_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="acpwire.rpc")
    err = error_from_exception(KeyError("x"), context="request foo")
    assert err.to_json() == {
        "code": -32603,
        "message": "Internal error: KeyError: 'x'",
        "data": {"exception": "KeyError", "message": "'x'"},
    }
    [record] = caplog.records
    assert record.levelno == logging.ERROR
    assert record.getMessage() == "request foo failed: KeyError: 'x'"
    assert record.exc_info is not None and isinstance(record.exc_info[1], KeyError)


def _raise_in_nested_task_groups() -> BaseException:
    async def fail() -> None:
        raise ValueError("bad value")

    async def main() -> None:
        async with anyio.create_task_group() as outer:
            async with anyio.create_task_group() as inner:
                inner.start_soon(fail)
            outer.start_soon(fail)

    try:
        anyio.run(main)
    except BaseException as exc:
        return exc
    raise AssertionError("no exception")


def test_exception_groups_are_unwrapped_to_the_leaf_and_its_own_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    group = _raise_in_nested_task_groups()
    assert isinstance(group, BaseExceptionGroup)
    caplog.set_level(logging.ERROR, logger="acpwire.rpc")
    err = error_from_exception(group, context="agent: request session/prompt")
    assert err.data == {"exception": "ValueError", "message": "bad value"}
    [record] = caplog.records
    assert record.exc_info is not None
    _, leaf, tb = record.exc_info
    assert isinstance(leaf, ValueError)
    text = "".join(traceback.format_exception(ValueError, leaf, tb))
    assert "ExceptionGroup" not in text and "anyio" not in text
    assert text.startswith("Traceback (most recent call last):\n  File ")
    assert 'raise ValueError("bad value")' in text and text.count("File ") == 1


def test_a_handler_bug_is_reported_as_its_cause() -> None:
    try:
        try:
            Point.model_validate({"x": 1, "y": 2})
        except ValidationError as exc:
            raise errors.HandlerBug("the m handler raised a ValidationError") from exc
    except errors.HandlerBug as bug:
        err = error_from_exception(bug)
    assert err.data == {"exception": "ValidationError", "message": "label: Field required"}


def test_messages_false_keeps_only_the_type() -> None:
    err = error_from_exception(KeyError("x"), messages=False)
    assert (err.message, err.data) == ("Internal error: KeyError", {"exception": "KeyError"})
    assert errors.error_messages_default({"ACPWIRE_ERROR_MESSAGES": "off"}) is False
    assert errors.error_messages_default({"ACPWIRE_ERROR_MESSAGES": "1"}) is True
    assert errors.error_messages_default({}) is True


def test_secrets_are_masked_in_the_answer() -> None:
    env = {"OPENAI_API_KEY": "sk-live-0123456789", "HOME": "/home/me"}
    text = (
        "auth failed for sk-live-0123456789 (api_key=abc123, 'password': 'hunter2', "
        "Authorization: Bearer eyJhbGciOiJIUzI1 ghp_abcdefghijklmnopqrstu) in /home/me, tokens=12"
    )
    assert errors.mask_secrets(text, env) == (
        "auth failed for *** (api_key=***, 'password': '***', "
        "Authorization: Bearer *** ***) in /home/me, tokens=12"
    )


def test_the_answer_masks_an_environment_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "t0ps3cr3t-value")
    err = error_from_exception(RuntimeError("login with t0ps3cr3t-value refused"))
    assert err.data == {"exception": "RuntimeError", "message": "login with *** refused"}


def test_connection_closed_error_is_an_rpc_error() -> None:
    err = errors.ConnectionClosedError()
    assert isinstance(err, RpcError)
    assert err.message == "Connection closed"
