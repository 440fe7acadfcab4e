"""Whatever a bot sends, each seat's reader either reads an answer or calls it garbage: it never
raises. Arbitrary bytes and arbitrary JSON (deep nesting, NaN, Infinity, 1e400, huge integers,
bools where numbers belong) go to the stdio answer reader, the Botzone answer reader and its
card-id judge; arbitrary protobuf bytes go to the gRPC action decoding."""

from __future__ import annotations

import json

from google.protobuf.message import DecodeError
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from shengji_arena.v1 import referee_pb2 as pb

from referee.rules.errors import InvalidActionError
from referee.seats.botzone_seat import BotzoneAnswerError, BotzoneGame, read_botzone_answer
from referee.seats.seat import Unreadable
from referee.seats.stdio_seat import read_answer
from referee.wire.bot_json import MAX_DEPTH
from referee.wire.protocol import action_from_pb

SETTINGS = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
REASON_MOST = 600
"""The longest reason a garbage answer may give: its quote and its cause are both cut."""

# -- JSON text a hostile bot may write ------------------------------------------------------------
_NUMBERS = st.one_of(
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1e-400", "1.0", "17.5",
                     "true", "false", "null", '"17"', '"-1"', '"1e3"', '" 7"', '"\\u0661"']),
    st.integers().map(str),
    st.integers(min_value=2**62, max_value=2**80).map(str),
    st.integers(min_value=-2**80, max_value=-1).map(str),
    st.integers(min_value=4000, max_value=6000).map(lambda n: "9" * n),  # past int's digit limit
    st.floats(allow_nan=False, allow_infinity=False).map(json.dumps),
)
_SCALARS = st.one_of(_NUMBERS, st.text(max_size=30).map(json.dumps))


def _deep(n: int, closed: bool) -> str:
    return "[" * n + ("]" * n if closed else "")


_DEEP = st.builds(_deep, st.integers(min_value=MAX_DEPTH - 2, max_value=3000), st.booleans())
JSON_TEXT = st.recursive(
    st.one_of(_SCALARS, _DEEP),
    lambda inner: st.one_of(
        st.lists(inner, max_size=5).map(lambda xs: "[" + ",".join(xs) + "]"),
        st.lists(st.tuples(st.text(max_size=10), inner), max_size=5).map(
            lambda kv: "{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in kv) + "}")),
    max_leaves=20)


@st.composite
def stdio_answers(draw) -> str:
    """An answer line shaped like a real one, each field possibly hostile."""
    fields = {}
    if draw(st.booleans()):
        fields["request_id"] = draw(st.one_of(_NUMBERS, JSON_TEXT))
    action = {}
    for name, good in (("kind", '"ACTION_KIND_PLAY"'), ("cards", '["3H"]'), ("suit", '"S"'),
                       ("take", "[]")):
        if draw(st.booleans()):
            action[name] = draw(st.one_of(st.just(good), _NUMBERS, JSON_TEXT))
    fields["action"] = draw(st.one_of(
        st.just("{" + ",".join(f'"{k}":{v}' for k, v in action.items()) + "}"), JSON_TEXT))
    return "{" + ",".join(f'"{k}":{v}' for k, v in fields.items()) + "}"


def _garbage_or_answer(got) -> None:
    assert isinstance(got, (pb.BotMessage, Unreadable)), got
    if isinstance(got, Unreadable):
        assert len(got.reason) <= REASON_MOST, got.reason[:REASON_MOST]


# -- stdio -------------------------------------------------------------------------------------
@SETTINGS
@given(st.binary(max_size=4096))
@example(b"[" * 50_000)
@example(b"\xff\xfe{")
def test_stdio_reads_any_bytes_as_an_answer_or_garbage(line):
    _garbage_or_answer(read_answer(line, 7))


@SETTINGS
@given(st.one_of(JSON_TEXT, stdio_answers()))
@example('{"request_id": Infinity, "action": {}}')
@example('{"action": {"kind": 1e400}}')
@example('{"request_id": 1e400, "action": {"kind": "ACTION_KIND_PASS"}}')
@example('{"request_id": true, "action": {"kind": "ACTION_KIND_PASS"}}')
@example('{"request_id": 7.0, "action": {"kind": "ACTION_KIND_PASS"}}')
@example('{"request_id": 9223372036854775808, "action": {"kind": "ACTION_KIND_PASS"}}')
@example('{"action": {"kind": "ACTION_KIND_PASS", "cards": ' + _deep(40, True) + "}}")
def test_stdio_reads_any_json_as_an_answer_or_garbage(text):
    got = read_answer(text.encode(), 7)
    _garbage_or_answer(got)
    if isinstance(got, pb.BotMessage):  # what was read is what was written
        data = json.loads(text)
        rid = data.get("request_id", 7)
        assert got.answer.request_id == int(rid)
        assert type(rid) is int or (isinstance(rid, str) and rid.isdigit())


@SETTINGS
@given(st.integers(min_value=0, max_value=2**63 - 1), st.booleans())
def test_stdio_reads_any_int64_request_id_written_as_a_number_or_a_string(rid, as_text):
    """The guard above refuses nothing a real answer may hold."""
    written = json.dumps(str(rid) if as_text else rid)
    got = read_answer(f'{{"request_id": {written}, "action": {{"kind": "ACTION_KIND_PASS"}}}}'
                      .encode(), 7)
    assert isinstance(got, pb.BotMessage), got
    assert got.answer.request_id == rid and got.answer.action.kind == pb.ACTION_KIND_PASS


NO_INTEGER = ["NaN", "Infinity", "-Infinity", "1e400", "true", "false", "7.5", "1.0", '"x7"',
              "9223372036854775808", "[7]", "{}"]


@SETTINGS
@given(st.one_of(st.tuples(st.just("request_id"), st.sampled_from(NO_INTEGER + ["-1", '"7 "'])),
                 st.tuples(st.just("kind"), st.sampled_from(NO_INTEGER))))
def test_stdio_a_number_that_is_no_integer_is_garbage_naming_what_was_expected(case):
    field, bad = case
    if field == "request_id":
        line = f'{{"request_id": {bad}, "action": {{"kind": "ACTION_KIND_PASS"}}}}'
    else:
        line = f'{{"action": {{"kind": {bad}}}}}'
    got = read_answer(line.encode(), 7)
    assert isinstance(got, Unreadable), got
    assert "expected" in got.reason or "Failed to parse" in got.reason, got.reason


@SETTINGS
@given(st.integers(min_value=MAX_DEPTH + 1, max_value=30_000))
def test_stdio_nesting_past_the_bound_is_garbage_saying_so(depth):
    line = b'{"action": ' + b"[" * depth + b"]" * depth + b"}"
    got = read_answer(line[:60_000], 7)
    assert isinstance(got, Unreadable) and f"nested deeper than {MAX_DEPTH}" in got.reason, got
    assert len(got.reason) <= REASON_MOST


# -- Botzone -----------------------------------------------------------------------------------
def _game_at_a_play() -> BotzoneGame:
    """A seat holding a few cards, asked to play."""
    game = BotzoneGame(seat=0)
    for kind in (0, 1, 13, 52, 53):
        game._take(kind)
    game.requests.append({"stage": "play"})
    return game


def _judge_botzone(line: bytes) -> None:
    got = read_botzone_answer(line)
    assert isinstance(got, (dict, Unreadable)), got
    if isinstance(got, Unreadable):
        assert len(got.reason) <= REASON_MOST, got.reason[:REASON_MOST]
        return
    try:
        _game_at_a_play().action(got.get("response"))
    except BotzoneAnswerError as e:  # the seat's garbage answer
        assert len(str(e)) <= REASON_MOST


@SETTINGS
@given(st.binary(max_size=4096))
@example(b"[" * 50_000)
def test_botzone_reads_any_bytes_as_an_answer_or_garbage(line):
    _judge_botzone(line)


@SETTINGS
@given(st.one_of(JSON_TEXT, JSON_TEXT.map(lambda t: f'{{"response": {t}}}')))
@example('{"response": ' + _deep(5000, True) + "}")
@example('{"response": [1e400]}')
@example('{"response": NaN}')
@example('{"response": [99999999999999999999999]}')
@example('{"response": [true, false]}')
def test_botzone_reads_any_json_as_an_answer_or_garbage(text):
    _judge_botzone(text.encode())


@SETTINGS
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
                    max_leaves=30))
def test_a_botzone_response_of_any_value_is_an_action_or_garbage(response):
    try:
        _game_at_a_play().action(response)
    except BotzoneAnswerError as e:
        assert len(str(e)) <= REASON_MOST


# -- gRPC --------------------------------------------------------------------------------------
_ACTION_FIELDS = st.fixed_dictionaries({
    "kind": st.one_of(st.integers(min_value=-2**31, max_value=2**31 - 1),
                      st.sampled_from(list(pb.ActionKind.values()))),
    "cards": st.lists(st.one_of(st.text(max_size=12), st.sampled_from(["3H", "BJ", "10S", "1X"])),
                      max_size=40),
    "suit": st.text(max_size=12),
    "take": st.lists(st.text(max_size=5), max_size=10),
})


def _decode(action: pb.Action) -> None:
    try:
        action_from_pb(action)
    except InvalidActionError as e:  # the seat's garbage answer
        assert len(str(e)) <= REASON_MOST, str(e)[:REASON_MOST]


@SETTINGS
@given(st.binary(max_size=4096))
@example(b"\x08" + b"\xff" * 9 + b"\x01")  # kind: a varint of 2**64 - 1
@example(b"\x08\x80\x80\x80\x80\x08")  # kind: 2**31, past int32
@example(b"\x12\x02\x33\x48" * 1000)  # a thousand cards
def test_grpc_decodes_any_protobuf_bytes_as_an_action_or_garbage(data):
    for message_type in (pb.Action, pb.BotMessage):
        try:
            message = message_type.FromString(data)
        except DecodeError:  # not protobuf: the stream breaks (the seat is disconnected)
            continue
        _decode(message if message_type is pb.Action else message.answer.action)


@SETTINGS
@given(_ACTION_FIELDS, st.integers(min_value=0, max_value=2000))
def test_grpc_decodes_any_action_fields_as_an_action_or_garbage(fields, repeat):
    action = pb.Action(**fields)
    action.cards.extend(["2H"] * repeat)  # an absurd number of cards
    _decode(action)
