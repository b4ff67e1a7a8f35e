"""Error objects and the exception → JSON-RPC error mapping."""

import logging

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
    err = error_from_exception(KeyError("secret-key"), context="request foo")
    assert err.to_json() == {"code": -32603, "message": "Internal error"}
    [record] = caplog.records
    assert record.levelno == logging.ERROR
    assert "request foo" in record.getMessage()
    assert record.exc_info is not None and isinstance(record.exc_info[1], KeyError)


def test_connection_closed_error_is_an_rpc_error() -> None:
    err = errors.ConnectionClosedError()
    assert isinstance(err, RpcError)
    assert err.message == "Connection closed"
