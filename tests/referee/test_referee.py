"""The gRPC referee with real bot processes: matches, hidden information, faults, health and
reflection."""

import asyncio
import dataclasses
import json
import sys
from collections import Counter

import grpc
import pytest

from conftest import ROOT
from referee.seats.manifest import Manifest, load_manifest
from referee.match.local import run_match, run_match_async
from referee.match.spec import MatchSpec, TimeControl
from referee.rules.cards import Card
from referee.rules.record import MatchRecord, verify

PY = ROOT / "sample_bots" / "python"
RANDOM = load_manifest(PY / "random")
GREEDY = load_manifest(PY / "greedy")
WITH_REQUESTS = load_manifest(PY / "random" / "with-requests.toml")
"""The random bot asking for its events with its requests (EVENT_DELIVERY_WITH_REQUESTS), as
``arena bench league`` enters it."""
STDIO = load_manifest(ROOT / "sample_bots" / "stdio")
NODE = load_manifest(ROOT / "sample_bots" / "node")
CPP = load_manifest(ROOT / "sample_bots" / "cpp")
FAULTY = ROOT / "tests" / "bots" / "faulty.py"
# connect_timeout_ms: a bound on a bot that never connects, never reached by one that does; a
# sandboxed Python bot's start takes 1 s idle and has taken over 8 s on a loaded machine
QUICK = TimeControl(per_decision_ms=1000, bank_ms=500, max_strikes=3, reconnect_window_ms=1000,
                    connect_timeout_ms=30_000)


def faulty(mode: str) -> Manifest:
    return Manifest(f"faulty-{mode}", "0", (sys.executable, str(FAULTY), mode), "grpc",
                    ROOT / "tests" / "bots", pythonpath=(PY,))  # the SDK


def _verify_record(record: dict) -> None:
    for game in record["games"]:
        assert verify(MatchRecord.from_dict(json.loads(json.dumps(game)))) == []


@pytest.mark.parametrize("variant", ["two-deck-80", "two-deck-fry", "single-deck", "three-deck"])
def test_a_match_of_four_processes_completes_and_verifies(variant, tmp_path):
    spec = MatchSpec(match_id=f"m-{variant}", variant=variant, seed="7", max_deals=1)
    result, record, runner = run_match(spec, [RANDOM, GREEDY, STDIO, GREEDY], tmp_path)
    assert result["forfeit"] is None and result["strikes"] == [0, 0, 0, 0]
    assert len(result["deals"]) == 1
    assert record["faults"] == []
    _verify_record(record)


@pytest.mark.parametrize("variant", ["two-deck-80", "two-deck-fry", "single-deck", "three-deck"])
def test_python_node_and_cpp_bots_play_a_match(variant, tmp_path):
    """random (Python), greedy (Python), the Node.js bot and the C++ bot: four processes."""
    assert (ROOT / "sample_bots" / "cpp" / "build" / "arena_bot").exists(), "run make bots"
    assert (ROOT / "sample_bots" / "node" / "node_modules").exists(), "run make bots"
    spec = MatchSpec(match_id=f"langs-{variant}", variant=variant, seed="9", max_deals=1)
    result, record, _ = run_match(spec, [RANDOM, NODE, GREEDY, CPP], tmp_path)
    logs = {i: (tmp_path / f"seat{i}.log").read_text(errors="replace")[-500:] for i in range(4)}
    assert result["forfeit"] is None and record["faults"] == [], (record["faults"], logs)
    assert len(result["deals"]) == 1
    assert record["bots"] == ["random@1.0.0", "node-sample@1.0.0", "greedy@1.0.0",
                              "cpp-sample@1.0.0"]
    _verify_record(record)


def test_deal_list_mode_plays_each_deal_from_its_seed(tmp_path):
    from referee.match.spec import DealSpec
    deals = [DealSpec("a", ("5", "3"), 1), DealSpec("b", ("2", "2"), 0)]
    spec = MatchSpec(match_id="dl", variant="two-deck-fry", deals=deals)
    result, record, _ = run_match(spec, [GREEDY, RANDOM, GREEDY, RANDOM], tmp_path)
    assert len(record["games"]) == 2 and len(result["deals"]) == 2
    first = record["games"][0]
    assert first["seed"] == "a" and first["start"]["levels"] == ["5", "3"]
    started = next(e for e in first["events"] if e["event"] == "DealStarted")
    assert started["dealer"] == 1 and started["levels"] == ["5", "3"]
    _verify_record(record)


def _card(text):
    try:
        return int(Card.parse(text))
    except ValueError:
        return None


def _cards_in(obj, out: Counter) -> None:
    """Every card ``obj`` names, as often as it names it."""
    if isinstance(obj, dict):
        for v in obj.values():
            _cards_in(v, out)
    elif isinstance(obj, list):
        for v in obj:
            _cards_in(v, out)
    elif isinstance(obj, str) and _card(obj) is not None:
        out[_card(obj)] += 1


def _card_lists(obj, out: list) -> None:
    """Each list of cards ``obj`` holds (a hand, a play, a hint's action, an event's cards), as
    a multiset, and each card named alone."""
    if isinstance(obj, dict):
        for v in obj.values():
            _card_lists(v, out)
    elif isinstance(obj, list):
        cards = [_card(v) for v in obj if isinstance(v, str)]
        if cards and None not in cards:
            out.append(Counter(cards))
        for v in obj:
            if not isinstance(v, str):
                _card_lists(v, out)
    elif isinstance(obj, str) and _card(obj) is not None:
        out.append(Counter([_card(obj)]))


def _plain(msg) -> dict:
    """``msg``'s set fields as dicts, lists and scalars, by field name (the content
    ``json_format.MessageToDict`` gives, at a fraction of its cost)."""
    out = {}
    for field, value in msg.ListFields():
        sub = field.message_type
        if sub is not None and sub.GetOptions().map_entry:
            nested = sub.fields_by_name["value"].message_type is not None
            out[field.name] = {k: _plain(v) if nested else v for k, v in value.items()}
        elif field.is_repeated:
            out[field.name] = [_plain(v) if sub is not None else v for v in value]
        else:
            out[field.name] = _plain(value) if sub is not None else value
    return out


def _within(named: Counter, seen: Counter) -> bool:
    """Every card of ``named`` seen at least as often (``Counter``'s ``<=``, without its cost)."""
    return all(seen[c] >= n for c, n in named.items())


def _message_cards(msg) -> list:
    """The multisets of cards ``msg`` names: one per list of cards in it."""
    d = _plain(msg)
    out: list = []
    for ev in (d.get("request", {}).get("events", []) + d.get("notice", {}).get("events", [])):
        _card_lists(json.loads(ev.get("json", "{}")), out)
    d.get("request", {}).pop("events", None)
    d.get("notice", {}).pop("events", None)
    d.get("welcome", {}).pop("options_json", None)
    d.get("match_end", {}).pop("result_json", None)
    _card_lists(d, out)
    return out


# events whose cards the actor shows from its own hand (it was shown them when they came)
_FROM_HAND = {"Declared": "seat", "Played": "seat", "Buried": "seat", "ThrowFailed": "seat",
              "CardsPassed": "giver"}


HIDDEN_DEALS = {"single-deck": 120, "two-deck-fry": 50, "two-deck-80": 50, "three-deck": 20}


@pytest.mark.parametrize("variant", sorted(HIDDEN_DEALS))
def test_no_message_carries_a_card_the_seat_may_not_see(variant, tmp_path):
    """Every card named in every message the referee sends a seat is one that seat had been
    shown by then (its own cards dealt, public reveals, plays, a kitty it buried). 240 deals in
    all, over the four variants; seats 1 and 2 (one of each team) take their events with their
    requests, seats 0 and 3 with notices."""
    from referee.match.spec import DealSpec
    start = "3" if variant == "three-deck" else "2"
    deals = [DealSpec(f"h{i}", (start, start), i % 4) for i in range(HIDDEN_DEALS[variant])]
    spec = MatchSpec(match_id="hidden", variant=variant, deals=deals)
    result, record, runner = asyncio.run(run_match_async(
        spec, [RANDOM, WITH_REQUESTS, WITH_REQUESTS, RANDOM], tmp_path, keep_sent=True))
    assert result["forfeit"] is None and len(result["deals"]) == HIDDEN_DEALS[variant]
    assert [s.events_with_requests for s in runner.seats] == [False, True, True, False]
    for seat in (1, 2):  # no notice but a deal end's
        assert {m.notice.reason for _, _, m in runner.sent[seat] if m.HasField("notice")} \
            == {"deal_end"}
    checked = 0
    for seat in range(4):
        current = None
        for game, done, msg in runner.sent[seat]:
            if game != current:  # each deal of the list is a game of its own
                current, seen, upto = game, Counter(), 0
                events = record["games"][game]["events"] if game >= 0 else []
            assert done >= upto
            for e in events[upto:done]:
                vis = e["visible_to"]
                if vis == "all" or vis == seat or (isinstance(vis, list) and seat in vis):
                    if e.get(_FROM_HAND.get(e["event"], "-")) != seat:
                        _cards_in({k: v for k, v in e.items() if k != "visible_to"}, seen)
            upto = done
            for named in _message_cards(msg):  # multisets: a second copy is a leak too
                assert _within(named, seen), (seat, msg.WhichOneof("body"), named - seen)
            checked += 1
    assert checked > 1000
    # partners are separate processes: four bot processes, one connection each
    assert all(seat.link.connections == 1 for seat in runner.seats)


def test_every_event_reaches_each_seat_once_and_a_leader_waits_for_no_notice(tmp_path):
    """Each seat is sent each event it may see exactly once, in the order of the record. After a
    trick, the winner (who leads next) is sent its request straight away, carrying the trick's
    events; the other three seats get a "trick" notice."""
    spec = MatchSpec(match_id="delivery", variant="two-deck-80", seed="d", max_deals=2)
    result, record, runner = asyncio.run(run_match_async(
        spec, [RANDOM, RANDOM, RANDOM, RANDOM], tmp_path, keep_sent=True))
    assert result["forfeit"] is None
    tricks = led_at_once = 0
    for seat in range(4):
        sent = [(g, m) for g, _, m in runner.sent[seat] if m.WhichOneof("body") in
                ("request", "notice")]
        for game in range(len(record["games"])):
            events = record["games"][game]["events"]
            expected = [e["event"] for e in events if e["visible_to"] == "all" or
                        e["visible_to"] == seat or (isinstance(e["visible_to"], list)
                                                    and seat in e["visible_to"])]
            got = []
            for g, m in sent:
                if g == game:
                    body = m.request if m.WhichOneof("body") == "request" else m.notice
                    got.extend(e.kind for e in body.events)
            assert got == expected, (seat, game)
        for _, m in sent:
            if m.WhichOneof("body") == "request" and m.request.events and \
                    m.request.events[-1].kind == "TrickWon":
                led_at_once += 1
            if m.WhichOneof("body") == "notice" and m.notice.reason == "trick":
                tricks += 1
                won = json.loads(m.notice.events[-1].json)
                assert won["event"] == "TrickWon" and won["seat"] != seat
    assert led_at_once > 20 and tricks == 3 * led_at_once


def _visible(event: dict, seat: int) -> bool:
    vis = event["visible_to"]
    return vis == "all" or vis == seat or (isinstance(vis, list) and seat in vis)


def _delivered(runner, record, seat):
    """What ``seat`` was sent: the events of its requests and notices in order (as bytes), the
    reason of each notice, and how many messages it got. Checks on the way that each request
    and each notice brings the seat up to date: with it, the seat has been sent every event it
    may see of those applied by then, in the record's order."""
    events, reasons, got, current = [], [], [], None
    for game, done, msg in runner.sent[seat]:
        which = msg.WhichOneof("body")
        if which not in ("request", "notice"):
            continue
        if game != current:
            current, got = game, []
        body = msg.request if which == "request" else msg.notice
        if which == "notice":
            reasons.append(body.reason)
        got += [e.kind for e in body.events]
        events += [e.SerializeToString() for e in body.events]
        applied = record["games"][game]["events"][:done]
        expected = [e["event"] for e in applied if _visible(e, seat)]
        assert got == expected, (seat, game, which, done)
    return events, reasons, len(runner.sent[seat])


def test_a_seat_may_take_its_events_with_its_requests_the_same_events_in_fewer_messages(tmp_path):
    """The same match (same seed, the same bots' choices) played with every seat taking its
    events with notices, then with seats 0 and 3 asking in their Hello for them with their
    requests: every seat is sent the very same events in the same order (its requests' and
    notices' concatenated), each by its next request at the latest; the two that asked get no
    deal start or trick notice (a deal end's only), so fewer messages; the others, the same
    messages as before."""
    spec = MatchSpec(match_id="delivery-modes", variant="two-deck-fry", seed="w", max_deals=2)
    plain = asyncio.run(run_match_async(spec, [RANDOM] * 4, tmp_path / "plain", keep_sent=True))
    mixed = asyncio.run(run_match_async(spec, [WITH_REQUESTS, RANDOM, RANDOM, WITH_REQUESTS],
                                        tmp_path / "mixed", keep_sent=True))
    assert plain[0]["forfeit"] is None and len(plain[0]["deals"]) == 2
    assert mixed[1]["games"] == plain[1]["games"]  # the same match, move for move
    assert [s.events_with_requests for s in mixed[2].seats] == [True, False, False, True]
    for seat in range(4):
        events, reasons, messages = _delivered(plain[2], plain[1], seat)
        events_now, reasons_now, messages_now = _delivered(mixed[2], mixed[1], seat)
        assert events_now == events, seat
        if seat in (0, 3):
            assert reasons_now == ["deal_end", "deal_end"], reasons_now
            assert "trick" in reasons and messages_now == messages - (len(reasons) - 2)
        else:
            assert reasons_now == reasons and messages_now == messages


def test_after_a_forfeit_a_seat_that_takes_its_events_with_requests_gets_the_rest(tmp_path):
    """A match that ends in a forfeit mid-deal: a seat that takes its events with its requests
    gets the events it was not sent yet in a "match_end" notice just before the MatchEnd, so it
    has been sent every event it may see; a seat with notices gets what it got before (no
    such notice)."""
    result, record, runner = asyncio.run(run_match_async(
        MatchSpec(match_id="forfeit-rest", variant="two-deck-fry", seed="f", max_deals=1,
                  time_control=QUICK),
        [faulty("illegal"), WITH_REQUESTS, RANDOM, RANDOM], tmp_path, keep_sent=True))
    assert result["forfeit"]["seat"] == 0
    last = [m for _, _, m in runner.sent[1]][-2:]
    assert last[0].notice.reason == "match_end" and last[1].HasField("match_end")
    events, _, _ = _delivered(runner, record, 1)
    everything = [e for e in record["games"][0]["events"] if _visible(e, 1)]
    assert len(events) == len(everything)
    assert not any(m.notice.reason == "match_end" for _, _, m in runner.sent[2])


def _fault_match(tmp_path, bots, **kw):
    spec = MatchSpec(match_id="faults", variant="two-deck-fry", seed="f", max_deals=1,
                     time_control=kw.pop("tc", QUICK))
    return run_match(spec, bots, tmp_path, **kw)


def _kinds(record, seat):
    return [f["kind"] for f in record["faults"] if f["seat"] == seat]


def test_a_bot_that_never_connects_forfeits(tmp_path):
    result, record, _ = _fault_match(tmp_path, [RANDOM, faulty("never"), RANDOM, RANDOM],
                                     tc=TimeControl(connect_timeout_ms=3000))
    assert result["forfeit"]["seat"] == 1 and result["winner_team"] == 0
    assert _kinds(record, 1) == ["never_connected"]


def test_a_bot_that_stops_answering_gets_defaults_then_forfeits(tmp_path):
    # seat 0 is asked first and three times in a row (the deal's declarations), so no other
    # seat answers before it is out: its timeouts take 0.5 + 0.3 + 0.3 s, not QUICK's 3.5 s,
    # and no figure can be too short for a bot that never answers
    tc = dataclasses.replace(QUICK, per_decision_ms=300, bank_ms=200)
    result, record, _ = _fault_match(tmp_path, [faulty("silent"), RANDOM, RANDOM, RANDOM],
                                     tc=tc)
    assert _kinds(record, 0) == ["timeout"] * 3
    assert all("default_action" in f for f in record["faults"])
    assert result["forfeit"]["seat"] == 0 and result["winner_team"] == 1
    _verify_record(record)  # the defaults played are in the record and replay


def test_illegal_actions_are_rejected_with_strikes(tmp_path):
    result, record, _ = _fault_match(tmp_path, [RANDOM, RANDOM, faulty("illegal"), RANDOM])
    assert _kinds(record, 2) == ["illegal"] * 3
    assert result["forfeit"]["seat"] == 2 and result["strikes"][2] == 3
    assert all(s == 0 for i, s in enumerate(result["strikes"]) if i != 2)


def test_garbage_bytes_and_garbage_answers(tmp_path):
    result, record, _ = _fault_match(tmp_path, [RANDOM, faulty("garbage"), RANDOM, RANDOM])
    assert _kinds(record, 1) == ["garbage"] * 3
    assert "1X" in record["faults"][0]["reason"]
    assert result["forfeit"]["seat"] == 1


def test_a_flood_is_struck_and_the_match_still_ends(tmp_path):
    result, record, _ = _fault_match(tmp_path, [RANDOM, RANDOM, RANDOM, faulty("flood")])
    assert "flood" in _kinds(record, 3)
    assert result["forfeit"]["seat"] == 3 and result["winner_team"] == 0


@pytest.mark.parametrize("gate_rate", ["unbounded", "default"])
def test_a_deluge_is_held_back_and_struck(tmp_path, monkeypatch, gate_rate):
    """A seat that streams large stray messages (60 kB each) without pause while three slow
    seats think. Through its gate's default byte rate, the deluge waits in the bot's own
    buffers (its answers behind it: it times out); with the gate's rate lifted, it reaches the
    referee, which holds at most INBOX_LIMIT of them unread (gRPC's flow control holds back the
    rest, not the referee's memory) and strikes it as a flood. Either way the seat is struck
    out, and no other seat has a fault."""
    from referee.match import local
    from referee.seats import gate, grpc_seat, seat as seats
    if gate_rate == "unbounded":
        monkeypatch.setattr(gate, "UP_BYTES_PER_S", 1 << 30)
        monkeypatch.setattr(gate, "UP_BURST", 1 << 30)
    hubs = []

    class Hub(grpc_seat.SeatHub):
        def __init__(self, *args, **kw):
            super().__init__(*args, **kw)
            hubs.append(self)
    monkeypatch.setattr(local, "SeatHub", Hub)
    # Seat 0 makes the deal's 23 declarations before the deluge's first request: it thinks
    # briefly (0.02 s) so they take 0.5 s, not 7. The deluge fills its inbox (unbounded) or
    # its own buffers (default) between its first answer and its next request, while seats 0,
    # 1 and 2 think: 0.6 s, where 0.03 s idle and 0.07 s loaded filled the inbox.
    slow = [faulty("slow:0.02"), faulty("slow"), faulty("slow")]
    most = 0

    async def play():
        nonlocal most

        async def watch():
            nonlocal most
            while True:
                if hubs:
                    most = max(most, hubs[0].links[3].inbox.qsize())
                await asyncio.sleep(0.005)  # (how often the watcher samples)
        watcher = asyncio.ensure_future(watch())
        spec = MatchSpec(match_id="deluge", variant="two-deck-fry", seed="f", max_deals=1,
                         time_control=QUICK)
        try:
            return await run_match_async(spec, slow + [faulty("deluge")], tmp_path)
        finally:
            watcher.cancel()
    result, record, _ = asyncio.run(play())
    assert result["forfeit"] == {"seat": 3, "team": 1, "reason": "3 strikes"}
    assert [_kinds(record, seat) for seat in range(3)] == [[], [], []]
    if gate_rate == "unbounded":
        assert _kinds(record, 3) == ["flood", "flood", "flood"]
        assert seats.INBOX_LIMIT - 1 <= most <= seats.INBOX_LIMIT, most
    else:  # the gate's burst, then about one message a second, reach the referee
        assert _kinds(record, 3) == ["timeout", "timeout", "timeout"]
        assert most < seats.INBOX_LIMIT // 2, most


def test_a_stolen_token_is_refused(tmp_path, monkeypatch):
    tokens = ["t0-secret", "t1-secret", "t2-secret", "t3-secret"]
    result, record, _ = _fault_match(tmp_path, [RANDOM, RANDOM, RANDOM,
                                                faulty(f"steal:{tokens[0]}")],
                                     tokens=tokens,
                                     tc=TimeControl(connect_timeout_ms=4000))
    # the thief's stream (its Hello says "python-bot") is the one refused, not the rightful
    # seat 0 ("random"), whichever came first
    refused = record["refused_streams"]
    assert [r["bot"] for r in refused] == ["python-bot"] and "seat 0" in refused[0]["reason"], \
        refused
    assert result["strikes"][0] == 0 and not _kinds(record, 0)  # seat 0 played its own seat
    assert result["forfeit"]["seat"] == 3  # it never played its own seat


def test_a_crash_mid_deal_forfeits_after_the_reconnect_window(tmp_path):
    result, record, _ = _fault_match(tmp_path, [RANDOM, RANDOM, faulty("crash"), RANDOM])
    assert _kinds(record, 2) == ["disconnect"]
    assert result["forfeit"] == {"seat": 2, "team": 0, "reason": "disconnected"}
    assert len(record["games"][0]["actions"]) > 20  # it played some decisions first


def test_a_seat_that_reconnects_is_welcomed_again_and_plays_on(tmp_path):
    """A seat drops its stream twice, once holding an unanswered request and once between its
    turns, and comes back with its token within the window: each new stream starts with a
    Welcome (the bot exits otherwise), the pending request comes again, and the match goes on
    with the reconnections recorded and no strike. The other seats take 50 ms a decision, so
    that the seat's second drop falls between its turns."""
    result, record, _ = _fault_match(tmp_path, [faulty("slow:0.05")] * 3 + [faulty("rejoin")])
    log = (tmp_path / "seat3.log").read_text(errors="replace")[-500:]
    assert result["forfeit"] is None and result["strikes"] == [0, 0, 0, 0], (record["faults"], log)
    assert _kinds(record, 3) == ["reconnect", "reconnect"]
    assert len(result["deals"]) == 1
    _verify_record(record)


def test_a_seat_that_keeps_reconnecting_forfeits(tmp_path):
    """A seat that drops and reopens its stream on every request: its team forfeits once it
    passes max_reconnects, and the record holds one entry per reconnection, no more."""
    tc = TimeControl(per_decision_ms=1000, bank_ms=500, max_strikes=3, reconnect_window_ms=1000,
                     connect_timeout_ms=30_000, max_reconnects=4)
    result, record, _ = _fault_match(tmp_path, [RANDOM, RANDOM, RANDOM, faulty("flap")], tc=tc)
    assert result["forfeit"] == {"seat": 3, "team": 1, "reason": "reconnected 5 times (at most 4)"}
    assert _kinds(record, 3) == ["reconnect"] * 5
    assert result["strikes"][3] == 0


def test_refused_streams_past_the_first_twenty_are_only_counted():
    from referee.seats.grpc_seat import REFUSALS_KEPT, SeatHub
    hub = SeatHub()
    for i in range(REFUSALS_KEPT + 5):
        hub.refuse("unknown token", f"bot-{i}" + "x" * 500)
    assert len(hub.refused) == REFUSALS_KEPT and hub.refused_more == 5
    assert hub.refused[0] == {"reason": "unknown token", "bot": ("bot-0" + "x" * 500)[:100]}


@pytest.fixture
def standalone_referee(standalone):
    """The address of ``standalone``'s referee."""
    return standalone[0]


@pytest.fixture
def standalone():
    """A referee server in its own process (seat tokens "aaaaaaaa" ... "dddddddd"), on TCP: its
    address, and the process (its output says "attached N" when a stream takes seat N)."""
    import os
    import socket
    import subprocess
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "protos")]))
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "bots" / "standalone_referee.py"),
                             str(port)], stdout=subprocess.PIPE, env=env)
    try:
        assert proc.stdout.readline().strip() == b"ready"
        yield f"127.0.0.1:{port}", proc
    finally:
        proc.kill()
        proc.wait()


def test_wrong_and_reused_tokens_over_tcp(standalone):
    """Over TCP: a wrong token is refused, and so is the token of a seat already connected."""
    import threading
    from shengji_arena.v1 import referee_pb2 as pb
    from shengji_arena.v1 import referee_pb2_grpc as pb_grpc
    address, referee = standalone
    results = {}

    def attempt(name, token, hold=None, opened=None):
        with grpc.insecure_channel(address) as ch:
            def messages():
                yield pb.BotMessage(hello=pb.Hello(token=token))
                if opened is not None:
                    opened.set()
                if hold is not None:
                    hold.wait(10)
            stream = pb_grpc.RefereeStub(ch).Play(messages(), timeout=10)
            try:
                next(stream)
                results[name] = "ok"
            except StopIteration:  # accepted; the stream ended when the bot stopped sending
                results[name] = "ended"
            except grpc.RpcError as e:
                results[name] = e.code()

    hold, opened = threading.Event(), threading.Event()
    seat0 = threading.Thread(target=attempt, args=("seat0", "a" * 8, hold, opened))
    seat0.start()
    assert opened.wait(10)
    assert referee.stdout.readline().strip() == b"attached 0"  # seat 0 is taken
    attempt("wrong", "nope")
    attempt("reused", "a" * 8)
    hold.set()
    seat0.join(15)
    assert results["wrong"] == grpc.StatusCode.PERMISSION_DENIED
    assert results["reused"] == grpc.StatusCode.ALREADY_EXISTS
    assert results["seat0"] == "ended"  # the first holder of the token was never refused


def test_a_generic_client_sees_the_services_and_serving_health(standalone_referee):
    """grpc-requests knows nothing of our protos: it works through server reflection."""
    from grpc_requests import Client
    client = Client.get_by_endpoint(standalone_referee)
    services = client.service_names
    health = client.request("grpc.health.v1.Health", "Check", {"service": ""})
    assert "shengji_arena.v1.Referee" in services and "grpc.health.v1.Health" in services
    assert health["status"] == "SERVING"


def test_the_soak_reports_a_bot_charged_with_faults_and_passes_clean_bots(tmp_path):
    import io
    from tools.soak import soak
    out = io.StringIO()
    clean = soak(["single-deck"], 1, 1, [str(PY / "random")], "t", out=out)
    assert clean == 0 and "1 matches" in out.getvalue() and "0 problem(s)" in out.getvalue()
    out = io.StringIO()
    illegal = f"{sys.executable} {FAULTY} illegal"
    rc = soak(["single-deck"], 1, 1, [str(PY / "random"), illegal], "t", keep=tmp_path, out=out)
    text = out.getvalue()
    assert rc == 1 and "illegal: " in text and "seat 1 (" in text, text
    assert (tmp_path / "soak-single-deck-0.json").exists()


def test_arena_match_names_a_bot_that_cannot_start(tmp_path):
    import subprocess
    out = subprocess.run([sys.executable, "-m", "cli", "match", str(PY / "random"),
                          str(tmp_path / "no-such-bot"), str(PY / "random"), str(PY / "random"),
                          "--out", str(tmp_path / "m.json")],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2, out
    assert "no-such-bot" in out.stderr and "cannot start" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr and not (tmp_path / "m.json").exists()


def _say_hello(address: str, **hello) -> object:
    """Open a stream to the referee at ``address`` with a Hello of these fields: "accepted",
    or the (status code, details) it was refused with."""
    from shengji_arena.v1 import referee_pb2 as pb
    from shengji_arena.v1 import referee_pb2_grpc as pb_grpc
    with grpc.insecure_channel(address) as ch:
        stream = pb_grpc.RefereeStub(ch).Play(iter([pb.BotMessage(hello=pb.Hello(**hello))]),
                                              timeout=10)
        try:
            next(stream)
            return "accepted"
        except StopIteration:
            return "accepted"
        except grpc.RpcError as e:
            return e.code(), e.details()


def test_a_bot_speaking_another_protocol_version_is_refused(standalone_referee):
    """A Hello naming another protocol version is refused with FAILED_PRECONDITION, saying which
    one the referee speaks; the seat's token stays free for a bot that speaks it."""
    def hello(protocol):
        return _say_hello(standalone_referee, token="b" * 8, protocol=protocol)

    code, details = hello("shengji-arena/2")
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert "shengji-arena/1" in details and "shengji-arena/2" in details
    assert hello("shengji-arena/1") == "accepted"


def test_a_hello_asking_for_an_unknown_event_delivery_is_refused(standalone_referee):
    """``Hello.event_delivery`` is checked: a value the referee does not know is refused with
    INVALID_ARGUMENT, naming the ones it knows; the seat's token stays free, and a Hello asking
    for the events with the requests is accepted."""
    from shengji_arena.v1 import referee_pb2 as pb

    def hello(delivery):
        return _say_hello(standalone_referee, token="c" * 8, event_delivery=delivery)

    code, details = hello(7)
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert "event_delivery 7" in details and "EVENT_DELIVERY_WITH_REQUESTS (2)" in details
    assert hello(pb.EVENT_DELIVERY_WITH_REQUESTS) == "accepted"


def test_a_bot_asking_for_an_unknown_event_delivery_is_a_fault_at_once(tmp_path):
    """The seat's own token with an event delivery the referee does not know: the bot cannot
    play as it asked, so its seat stops waiting and the fault says why."""
    import time
    code = ("import os, grpc\n"
            "from shengji_arena.v1 import referee_pb2 as pb, referee_pb2_grpc as g\n"
            "with grpc.insecure_channel(os.environ['ARENA_REFEREE']) as ch:\n"
            "    s = g.RefereeStub(ch).Play(iter([pb.BotMessage(hello=pb.Hello(\n"
            "        token=os.environ['ARENA_TOKEN'], bot_name='odd', event_delivery=9))]))\n"
            "    try:\n"
            "        next(s)\n"
            "    except grpc.RpcError as e:\n"
            "        print(e.code(), e.details())\n")
    odd = dataclasses.replace(RANDOM, name="odd", command=("python3", "-c", code))
    started = time.monotonic()
    result, record, _ = run_match(MatchSpec(match_id="odd", variant="two-deck-80", seed="o",
                                            max_deals=1), [RANDOM, RANDOM, odd, RANDOM],
                                  tmp_path, sandbox="none")
    assert time.monotonic() - started < 8.0  # not the connect timeout's 15 s
    assert result["forfeit"]["seat"] == 2
    fault, = [f for f in record["faults"] if f["seat"] == 2]
    assert fault["reason"].startswith("seat 2 was refused: its Hello asks for event_delivery 9, "
                                      "which is none of EVENT_DELIVERY_UNSPECIFIED (0)"), fault


def test_a_chatty_bot_cannot_fill_the_disk_with_its_log(tmp_path, monkeypatch):
    """A bot that prints a megabyte of debugging output: its seat's log keeps LOG_LIMIT bytes and
    says how much more was dropped, and the match is played as usual."""
    from referee.seats import launch
    monkeypatch.setattr(launch, "LOG_LIMIT", 100_000)
    result, record, _ = _fault_match(tmp_path, [RANDOM, RANDOM, faulty("chatty"), RANDOM])
    assert result["forfeit"] is None and record["faults"] == []
    log = (tmp_path / "seat2.log").read_bytes()
    assert log.startswith(b"debug debug") and 100_000 < len(log) < 100_300
    dropped = int(log.rsplit(b"[arena: ", 1)[1].split(b" ")[0])
    assert dropped == 8000 * len("debug " * 20 + "\n") - 100_000
    assert b"a seat's log keeps 100000 bytes" in log
    assert (tmp_path / "seat0.log").stat().st_size < 10_000  # a quiet bot's log is untouched


def test_a_bot_that_thinks_into_its_time_bank_is_told_what_is_left(tmp_path):
    """Each answer past the allowance is taken from the bank; the next request says what is
    left in whole milliseconds, never more. The bot thinks 50 ms against 20 allowed: 30 ms a
    decision, less only what the referee's own loop stalled through while it was open
    (``LoopLag``: a loaded machine's, never charged), so the bank falls by at least that."""
    tc = TimeControl(per_decision_ms=20, bank_ms=60_000, connect_timeout_ms=30_000)
    spec = MatchSpec(match_id="bank", variant="two-deck-fry", seed="b", max_deals=1,
                     time_control=tc)
    result, record, runner = run_match(spec, [faulty("slow:0.05"), RANDOM, RANDOM, RANDOM],
                                       tmp_path, keep_sent=True)
    assert result["forfeit"] is None and not record["faults"]
    banks = [m.request.bank_left_ms for _, _, m in runner.sent[0] if m.HasField("request")]
    assert len(banks) > 10 and banks[0] == 60_000
    drops = [earlier - later for earlier, later in zip(banks, banks[1:])]
    lost_ms = runner.excused_s * 1000  # (every seat's stalls: at least seat 0's)
    assert all(d >= 0 for d in drops), banks
    assert sum(drops) >= 30 * len(drops) - lost_ms - 1, (banks, lost_ms)


class _Loop:
    """A loop's clock and timers for ``LoopLag``, run by hand: ``idle`` runs each tick when it
    is due; ``stall`` moves the clock on with nothing run, then runs the late tick."""

    def __init__(self) -> None:
        self.now, self.timer = 0.0, None

    def time(self) -> float:
        return self.now

    def call_at(self, when, fn):
        self.timer = (when, fn)
        return self

    def cancel(self) -> None:
        self.timer = None

    def idle(self, seconds: float) -> None:
        end = self.now + seconds
        while self.timer[0] <= end:
            self.now = self.timer[0]
            self.timer[1]()
        self.now = end

    def stall(self, seconds: float) -> None:
        self.now += seconds
        self.timer[1]()


def test_an_answer_is_excused_the_stalls_it_waited_through_and_no_others():
    """``waited_through``: the loop's stall an answer waited through is not charged, with any
    brief stall of the loop catching up after it (a loaded machine's), counted in the loop's
    ticks, not time; a stall the answer did not wait through (it ended ticks before, or came
    before the request) is charged."""
    from referee.seats.mailbox import (LAG_TICK_S, LAG_TOLERANCE_S, SETTLE_TICKS, LoopLag,
                                       waited_through)
    loop = _Loop()
    lag = LoopLag(loop)  # type: ignore[arg-type]
    loop.idle(0.1)
    started = loop.now
    loop.stall(0.6)
    assert waited_through(started, loop.now, lag) == pytest.approx(0.6 - LAG_TOLERANCE_S,
                                                                   abs=LAG_TICK_S)
    # the loop catching up stalls again, 30 ms, one tick later: both are excused
    loop.idle(LAG_TICK_S)
    loop.stall(0.03)
    both = waited_through(started, loop.now, lag)
    assert both == pytest.approx(0.6 + 0.03 - 2 * LAG_TOLERANCE_S, abs=2 * LAG_TICK_S)
    # an answer taken once the loop has ticked SETTLE_TICKS times since: none (it came later)
    loop.idle(LAG_TICK_S * (SETTLE_TICKS - 1))
    assert waited_through(started, loop.now, lag) == both
    loop.idle(LAG_TICK_S)
    assert waited_through(started, loop.now, lag) == 0.0
    # a request sent after a stall is not excused it
    loop.stall(0.2)
    assert waited_through(loop.now + 0.001, loop.now, lag) == 0.0
