"""Part A, in process: decode, validate, dispatch and encode of ``session/update``.

The data and the SDK paths follow the perf anchor (reference §2.6 and Appendix A): N
``agent_message_chunk`` notifications of ~35 characters of text, best of 7. Our paths are
what the runtime really runs: :meth:`AcpEndpoint.decode` (the one-pass decoder) then
:meth:`AcpEndpoint.on_notification`, and :func:`encode_notification` on the generated
models. Before timing, both encoders' output is checked to be the same JSON.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from acp import helpers
from acp.client.router import build_client_router
from acp.schema import SessionNotification as SdkNotification
from acp.utils import serialize_params

from acp_v1 import models as m
from acpwire.link.builders import text_chunk
from acpwire.link.endpoint import AcpEndpoint
from acpwire.link.fastpath import text_chunk_params
from acpwire.rpc import Notification
from acpwire.rpc.messages import encode_notification, encode_notification_raw

from .results import Row, faster, interleaved

log = logging.getLogger(__name__)

SECTION = "A. Wire layer vs agent-client-protocol 0.12.1 (in process)"
SESSION = "sess_abc123def456"


def _text(i: int) -> str:
    return f"token {i} of the streamed answer "


def make_lines(n: int) -> list[bytes]:
    """The anchor's N wire lines (same key order as the SDK's ``json.dumps``)."""
    return [
        (
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {
                        "sessionId": SESSION,
                        "update": {
                            "sessionUpdate": "agent_message_chunk",
                            "content": {"type": "text", "text": _text(i)},
                        },
                    },
                },
                separators=(",", ":"),
            )
            + "\n"
        ).encode()
        for i in range(n)
    ]


def drive(coro: Coroutine[Any, Any, None]) -> None:
    """Run a coroutine that never suspends, without an event loop's per-run overhead."""
    try:
        coro.send(None)
    except StopIteration:
        return
    coro.close()
    raise RuntimeError("the benchmark coroutine suspended; it must not")


class _OurClient:
    """The trivial handler our endpoint routes to."""

    def __init__(self) -> None:
        self.count = 0

    async def session_update(self, params: m.SessionNotification) -> None:
        self.count += 1


class _SdkClient:
    """The trivial handler the SDK's router routes to (keyword arguments, its style)."""

    def __init__(self) -> None:
        self.count = 0

    async def session_update(self, session_id: str, update: object, **kwargs: Any) -> None:
        self.count += 1


def _sdk_encode(n: SdkNotification) -> bytes:
    payload = {"jsonrpc": "2.0", "method": "session/update", "params": serialize_params(n)}
    return (json.dumps(payload, separators=(",", ":")) + "\n").encode("utf-8")


def _ours_model(i: int) -> m.SessionNotification:
    return m.SessionNotification(
        session_id=SESSION,
        update=m.SessionUpdateAgentMessageChunk(content=m.ContentBlockText(text=_text(i))),
    )


def _sdk_model(i: int) -> SdkNotification:
    return SdkNotification(session_id=SESSION, update=helpers.update_agent_message_text(_text(i)))


def check_same_output() -> None:
    """Refuse to compare encoders that do not produce the same message."""
    ours, sdk = encode_notification("session/update", _ours_model(7)), _sdk_encode(_sdk_model(7))
    if json.loads(ours) != json.loads(sdk):
        raise RuntimeError(f"encoders differ:\n ours {ours!r}\n sdk  {sdk!r}")
    built = encode_notification("session/update", text_chunk(SESSION, _text(7)))
    if built != ours:
        raise RuntimeError(f"text_chunk differs from the nested models:\n {built!r}\n {ours!r}")
    ep = AcpEndpoint("client", _OurClient())
    decoded = ep.decode(sdk.rstrip(b"\n"))
    if not isinstance(decoded, Notification) or decoded.params != _ours_model(7):
        raise RuntimeError(f"our decoder misread the SDK's line: {decoded!r}")


def run(n: int = 10_000, repeats: int = 7) -> list[Row]:
    check_same_output()
    lines = make_lines(n)
    # What acpwire's LineReader hands the decoder: each line without its terminator (the
    # SDK's readline keeps it, and its path strips it, as in the anchor script).
    framed = [line.rstrip(b"\n") for line in lines]
    ours_client, sdk_client = _OurClient(), _SdkClient()
    endpoint = AcpEndpoint("client", ours_client)
    router = build_client_router(sdk_client)  # type: ignore[arg-type]  # duck-typed, as SDK users do

    def sdk_parse() -> None:
        for line in lines:
            SdkNotification.model_validate(json.loads(line.strip()).get("params"))

    def sdk_routed() -> None:
        async def go() -> None:
            for line in lines:
                await router("session/update", json.loads(line.strip()).get("params"), True)

        drive(go())

    def ours_decode() -> None:
        decode = endpoint.decode
        for line in framed:
            decode(line)

    def ours_dispatch() -> None:
        async def go() -> None:
            decode, dispatch = endpoint.decode, endpoint.on_notification
            for line in framed:
                msg = decode(line)
                assert isinstance(msg, Notification)
                await dispatch(msg.method, msg.params)

        drive(go())

    def sdk_encode() -> None:
        for i in range(n):
            _sdk_encode(_sdk_model(i))

    def ours_encode() -> None:
        for i in range(n):
            encode_notification("session/update", text_chunk(SESSION, _text(i)))

    def ours_encode_nested() -> None:
        for i in range(n):
            encode_notification("session/update", _ours_model(i))

    sdk_prebuilt, ours_prebuilt = (
        [_sdk_model(i) for i in range(n)],
        [_ours_model(i) for i in range(n)],
    )

    def sdk_encode_prebuilt() -> None:
        for note in sdk_prebuilt:
            _sdk_encode(note)

    def ours_encode_streaming() -> None:
        # What the backend sends per streamed text chunk (acpwire.link.fastpath): same bytes.
        for i in range(n):
            params = text_chunk_params(SESSION, _text(i), "agent_message_chunk")
            assert params is not None
            encode_notification_raw("session/update", params)

    def ours_encode_prebuilt() -> None:
        for model in ours_prebuilt:
            encode_notification("session/update", model)

    def json_loads_only() -> None:
        for line in lines:
            json.loads(line)

    def per_msg(*fns: Callable[[], None]) -> list[tuple[float, list[float]]]:
        for fn in fns:
            fn()  # warm-up: lazily built adapters, caches
        return [
            (best / n * 1e6, [s / n * 1e6 for s in samples])
            for best, samples in interleaved(fns, repeats)
        ]

    log.info("micro: decode, validate, dispatch (N=%d, best of %d)", n, repeats)
    decoding = per_msg(sdk_parse, sdk_routed, ours_dispatch, ours_decode, json_loads_only)
    (t_sdk_parse, s_sdk_parse), (t_sdk_routed, s_sdk_routed) = decoding[:2]
    (t_ours_dispatch, s_ours_dispatch), (t_ours_decode, s_ours_decode) = decoding[2:4]
    t_loads = decoding[4][0]
    log.info("micro: encode (N=%d, best of %d)", n, repeats)
    encoding = per_msg(
        sdk_encode,
        ours_encode,
        sdk_encode_prebuilt,
        ours_encode_prebuilt,
        ours_encode_streaming,
        ours_encode_nested,
    )
    (t_sdk_enc, s_sdk_enc), (t_ours_enc, s_ours_enc) = encoding[:2]
    (t_sdk_pre, s_sdk_pre), (t_ours_pre, s_ours_pre) = encoding[2:4]
    (t_ours_stream, s_ours_stream), (t_ours_nested, s_ours_nested) = encoding[4:6]

    unit = "µs/msg"
    return [
        Row(
            SECTION,
            "Decode + validate only (SDK: json.loads + model_validate, Appendix A)",
            unit,
            t_sdk_parse,
            t_ours_decode,
            faster(2),
            "ours: AcpEndpoint.decode (one pydantic-core pass over the bytes)",
            {"anchor": s_sdk_parse, "ours": s_ours_decode},
        ),
        Row(
            SECTION,
            "Decode + validate + dispatch (SDK: json.loads + its router)",
            unit,
            t_sdk_routed,
            t_ours_dispatch,
            faster(2),
            "SDK: json.loads + MessageRouter (validate, kwargs, handler), no task per message; "
            "ours: AcpEndpoint.decode + on_notification to a trivial handler",
            {"anchor": s_sdk_routed, "ours": s_ours_dispatch},
        ),
        Row(
            SECTION,
            "Decode + validate + dispatch vs the SDK's decode alone (row 1's anchor)",
            unit,
            t_sdk_parse,
            t_ours_dispatch,
            None,
            "a stricter view: our dispatch is counted, the SDK's is not",
            {"anchor": s_sdk_parse, "ours": s_ours_dispatch},
        ),
        Row(
            SECTION,
            "Encode: construct + serialize + envelope",
            unit,
            t_sdk_enc,
            t_ours_enc,
            faster(2),
            "SDK: helpers.update_agent_message_text + SessionNotification + serialize_params "
            "+ json.dumps; ours: acpwire.link.builders.text_chunk + encode_notification",
            {"anchor": s_sdk_enc, "ours": s_ours_enc},
        ),
        Row(
            SECTION,
            "Encode: the backend's streaming path for a text chunk",
            unit,
            t_sdk_enc,
            t_ours_stream,
            faster(2),
            "ours: acpwire.link.fastpath bytes (a test checks they equal the models' encoding) "
            "+ envelope; SDK as in the row above",
            {"anchor": s_sdk_enc, "ours": s_ours_stream},
        ),
        Row(
            SECTION,
            "Encode: three nested model constructors + serialize + envelope",
            unit,
            t_sdk_enc,
            t_ours_nested,
            None,
            "ours: SessionNotification(update=SessionUpdateAgentMessageChunk(content="
            "ContentBlockText(...))), each validated on its own; SDK as in row 4",
            {"anchor": s_sdk_enc, "ours": s_ours_nested},
        ),
        Row(
            SECTION,
            "Encode a prebuilt model",
            unit,
            t_sdk_pre,
            t_ours_pre,
            None,
            "no construction; serialization + envelope only",
            {"anchor": s_sdk_pre, "ours": s_ours_pre},
        ),
        Row(
            SECTION,
            "Reference: stdlib json.loads of the line only",
            unit,
            t_loads,
            None,
            None,
            "the floor any dict-based decoder pays before validating",
        ),
    ]
