"""A real match (one deal, real bot processes in the real sandbox) in which one bot answers with
deep nesting, Infinity, NaN, 1e400, a number past 64 bits and bytes that are not JSON; over
gRPC, with protobuf bytes no real bot writes. The match ends, its record is written, the
hostile seat has a garbage strike for each such answer, and no other seat has any fault."""

from __future__ import annotations

import json
import shutil
import sys

import pytest
from conftest import ROOT

from referee.match import local
from referee.match.local import run_match
from referee.match.matchfile import MatchFile
from referee.match.spec import MatchSpec, TimeControl
from referee.seats.manifest import Manifest, load_manifest
from referee.seats.stdio_seat import StdioSeat

RANDOM = load_manifest(ROOT / "sample_bots" / "python" / "random")
HOSTILE_SEAT = 1

STDIO_ANSWERS = [  # each a line, %d the open request's id where it has one
    b"[" * 50_000,
    b'{"request_id": Infinity, "action": {"kind": "ACTION_KIND_PASS"}}',
    b'{"request_id": %d, "action": {"kind": 1e400}}',
    b'{"request_id": NaN, "action": {"kind": "ACTION_KIND_PASS"}}',
    b'{"request_id": 99999999999999999999999, "action": {"kind": "ACTION_KIND_PASS"}}',
    b'{"request_id": %d, "action": {"kind": 5.5, "cards": []}}',
    bytes(b for b in range(256) if b != 10),
]
STDIO_BOT = r"""
import json, sys
ANSWERS = %r
asked = 0
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] != "request":
        continue
    if asked < len(ANSWERS):
        text = ANSWERS[asked]
        sys.stdout.buffer.write((text.replace(b"%%d", m["request_id"].encode())) + b"\n")
    else:
        sys.stdout.write(json.dumps({"request_id": m["request_id"],
                                     "action": m["hint"]["actions"][0]}) + "\n")
    sys.stdout.flush()
    asked += 1
"""

BOTZONE_ANSWERS = [
    b"[" * 50_000,
    b'{"response": Infinity}',
    b'{"response": [1e400]}',
    b'{"response": NaN}',
    b'{"response": [99999999999999999999999]}',
    b'{"response": ' + b"[" * 40 + b"]" * 40 + b"}",
    bytes(b for b in range(256) if b != 10),
]
BOTZONE_BOT = r"""
import json, sys
import bot

ANSWERS = %r
b = bot.Bot(False)
first = json.loads(sys.stdin.readline())
b.requests, b.responses = first["requests"], first["responses"]
while True:
    plays = sum(r["stage"] == "play" for r in b.requests)  # (started afresh: the history counts)
    if b.requests[-1]["stage"] == "play" and plays <= len(ANSWERS):
        sys.stdout.buffer.write(ANSWERS[plays - 1] + b"\n")
        sys.stdout.flush()
        sys.exit(0)
    response = b.answer()
    b.responses.append(response)
    print(json.dumps({"response": response}), flush=True)
    print(bot.KEEP_RUNNING, flush=True)
    b.requests.append(json.loads(sys.stdin.readline()))
"""

GRPC_ACTIONS = [  # the bytes of an Action message
    b"\x08" + b"\xff" * 9 + b"\x01",  # kind: a varint of 2**64 - 1 (-1 as an enum)
    b"\x08\xff\xff\xff\xff\x07",  # kind: 2**31 - 1
    b"\x08\x05" + b"\x12\x02\x32\x48" * 5000,  # PLAY with 5000 cards
    b"\x08\x05" + b"\x12\x02\x32\x48" * 300,  # PLAY with 300 cards: read, and illegal
    b"\x08\x05" + b"\x12\x08" + "\u00df\u00df\u00df\u00df".encode() * 1,  # a card of 4 letters
    b"\x08\x02\x1a\x10" + "\u1e9e".encode() * 5 + b"\x01",  # DECLARE, a suit of 16 bytes
    b"\x08\x0b" + b"\x22\x02BJ" * 3000 + b"\x78\x00",  # BURY_JOKERS taking 3000, a field 15
]
GRPC_BOT = r"""
import os, queue, sys
import grpc
from shengji_arena.v1 import referee_pb2 as pb

ACTIONS = %r
ANSWER = pb.BotMessage.DESCRIPTOR.fields_by_name["answer"].number


def varint(n):
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def answer(rid, action):
    body = b"\x08" + varint(rid) + b"\x12" + varint(len(action)) + action
    return varint(ANSWER << 3 | 2) + varint(len(body)) + body


outgoing = queue.Queue()
outgoing.put(pb.BotMessage(hello=pb.Hello(token=os.environ["ARENA_TOKEN"],
                                          bot_name="hostile")).SerializeToString())
with grpc.insecure_channel(os.environ["ARENA_REFEREE"]) as channel:
    play = channel.stream_stream("/shengji_arena.v1.Referee/Play",
                                 response_deserializer=pb.RefereeMessage.FromString)
    asked = 0
    for msg in play(iter(outgoing.get, None)):
        if msg.HasField("request"):
            rid = msg.request.request_id
            if asked < len(ACTIONS):
                outgoing.put(answer(rid, ACTIONS[asked]))
            else:
                outgoing.put(answer(rid, msg.request.hint.actions[0].SerializeToString()))
            asked += 1
        if msg.HasField("match_end"):
            break
    outgoing.put(None)
"""


def _inline(tmp_path, code: str, protocol: str) -> Manifest:
    """A manifest for an inline Python program, in a folder a sandboxed seat's uid may enter."""
    folder = tmp_path / f"hostile-{protocol}"
    folder.mkdir(mode=0o755)
    return Manifest(f"hostile-{protocol}", "0", (sys.executable, "-c", code), protocol, folder)


def _botzone(tmp_path, code: str) -> Manifest:
    """The sample Botzone bot with a hostile program in front of it, in a folder of its own."""
    folder = tmp_path / "hostile-botzone"
    folder.mkdir(mode=0o755)
    shutil.copy(ROOT / "sample_bots" / "botzone" / "bot.py", folder / "bot.py")
    (folder / "hostile.py").write_text(code)
    (folder / "bot.toml").write_text('name = "hostile-botzone"\nversion = "1"\n'
                                     'command = ["python3", "-S", "hostile.py"]\n'
                                     'protocol = "botzone"\n')
    for p in folder.iterdir():
        p.chmod(0o644)
    return load_manifest(folder)


def _play(tmp_path, variant: str, hostile: Manifest, answers: int):
    """Play one deal with the hostile bot in ``HOSTILE_SEAT`` and random bots elsewhere; it is
    allowed one strike more than its hostile answers, so that each is judged."""
    bots = [RANDOM] * 4
    bots[HOSTILE_SEAT] = hostile
    tc = TimeControl(per_decision_ms=3000, bank_ms=5000, max_strikes=answers + 1,
                     connect_timeout_ms=15000)
    spec = MatchSpec(match_id=f"hostile-{hostile.protocol}", variant=variant, seed="hostile",
                     max_deals=1, time_control=tc)
    result, record, _ = run_match(spec, bots, tmp_path / "match")
    out = tmp_path / "record.json"
    out.write_text(json.dumps(record))
    return result, MatchFile.from_dict(json.loads(out.read_text()), str(out)), record


def _assert_only_the_hostile_seat_is_charged(result, match, record, answers: int,
                                             kinds=("garbage",)) -> None:
    assert result["forfeit"] is None, result["forfeit"]
    assert len(match.result.deals) == 1  # the deal was played to its end
    strikes = [0, 0, 0, 0]
    strikes[HOSTILE_SEAT] = answers
    assert result["strikes"] == strikes, record["faults"]
    faults = record["faults"]
    assert {f["seat"] for f in faults} == {HOSTILE_SEAT}, faults
    assert len(faults) == answers and all(f["kind"] in kinds for f in faults), faults
    assert all(len(f["reason"]) <= 500 for f in faults), faults


def test_a_stdio_bot_answering_hostile_json_fails_only_its_own_seat(tmp_path):
    bot = _inline(tmp_path, STDIO_BOT % STDIO_ANSWERS, "stdio")
    result, match, record = _play(tmp_path, "two-deck-fry", bot, len(STDIO_ANSWERS))
    _assert_only_the_hostile_seat_is_charged(result, match, record, len(STDIO_ANSWERS))
    reasons = [f["reason"] for f in record["faults"]]
    assert "nested deeper than 32" in reasons[0] and "Infinity" in reasons[1], reasons
    assert "1e400" in reasons[2] and "NaN" in reasons[3], reasons
    assert "expected an integer from 0 to" in reasons[4], reasons
    assert '"action.kind" 5.5' in reasons[5], reasons


def test_a_botzone_bot_answering_hostile_json_fails_only_its_own_seat(tmp_path):
    bot = _botzone(tmp_path, BOTZONE_BOT % BOTZONE_ANSWERS)
    result, match, record = _play(tmp_path, "botzone-tractor", bot, len(BOTZONE_ANSWERS))
    _assert_only_the_hostile_seat_is_charged(result, match, record, len(BOTZONE_ANSWERS))
    reasons = [f["reason"] for f in record["faults"]]
    assert "nested deeper than 32" in reasons[0] and "Infinity" in reasons[1], reasons
    assert "1e400" in reasons[2] and "NaN" in reasons[3], reasons
    assert "expected ids 0-107" in reasons[4], reasons
    assert "nested deeper than 32" in reasons[5], reasons


def test_a_grpc_bot_sending_hostile_protobuf_fails_only_its_own_seat(tmp_path):
    bot = _inline(tmp_path, GRPC_BOT % GRPC_ACTIONS, "grpc")
    result, match, record = _play(tmp_path, "two-deck-fry", bot, len(GRPC_ACTIONS))
    # (a well-formed action that is no play here is an illegal one)
    _assert_only_the_hostile_seat_is_charged(result, match, record, len(GRPC_ACTIONS),
                                             kinds=("garbage", "illegal"))
    reasons = [f["reason"] for f in record["faults"]]
    assert reasons[0].startswith("Action.kind -1: expected one of"), reasons
    assert reasons[1].startswith("Action.kind 2147483647"), reasons
    assert [f["kind"] for f in record["faults"]][:2] == ["garbage", "garbage"]
    assert reasons[2] == "Action.cards: 5000 cards: expected at most 324", reasons
    assert record["faults"][3]["kind"] == "illegal" and "characters)" in reasons[3], reasons
    assert "Action.cards[0]: " in reasons[4], reasons


# -- the runner's second line of defence ---------------------------------------------------------
class FaultingSeat(StdioSeat):
    """A real stdio seat whose reader fails on its bot's second answer, as a flaw not found yet
    would; with ``rejection_fails``, sending it a rejection fails too."""

    rejection_fails = False
    failed_on: list[int] = []  # the request whose answer the reader failed on (set per test)

    def __init__(self) -> None:
        super().__init__()
        self.answers = 0

    async def _reply(self, rid, deadline, watch):
        got = await super()._reply(rid, deadline, watch)
        self.answers += 1
        if self.answers == 2:
            self.failed_on.append(rid)
            raise RuntimeError("a flaw in the reader " + "x" * 5000)
        return got

    def notify(self, message) -> None:
        if self.rejection_fails and message.HasField("rejection"):
            raise KeyError("the rejection could not be sent")
        super().notify(message)


def test_a_seat_whose_reply_cannot_be_judged_takes_a_garbage_strike(tmp_path, monkeypatch):
    monkeypatch.setattr(FaultingSeat, "failed_on", [])
    monkeypatch.setattr(local, "StdioSeat", FaultingSeat)
    bot = _inline(tmp_path, STDIO_BOT % [], "stdio")  # (answers every request well)
    result, match, record = _play(tmp_path, "two-deck-fry", bot, 1)
    _assert_only_the_hostile_seat_is_charged(result, match, record, 1)
    [fault] = record["faults"]
    assert fault["request_id"] == FaultingSeat.failed_on[0]
    assert fault["reason"].startswith("the referee could not judge its answer: RuntimeError: "
                                      "a flaw in the reader xxx"), fault
    assert fault["reason"].endswith("characters)"), fault


def test_a_referee_that_fails_all_the_same_names_the_seat(tmp_path, monkeypatch):
    seat = type("RejectionFails", (FaultingSeat,), {"rejection_fails": True, "failed_on": []})
    monkeypatch.setattr(local, "StdioSeat", seat)
    bot = _inline(tmp_path, STDIO_BOT % [], "stdio")
    with pytest.raises(KeyError) as failed:
        _play(tmp_path, "two-deck-fry", bot, 1)
    assert failed.value.__notes__ == [
        f"the referee failed while judging seat {HOSTILE_SEAT}'s answer to request "
        f"{seat.failed_on[0]}"]
