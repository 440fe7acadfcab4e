"""Botzone Tractor bots, unchanged: the ``botzone-tractor`` preset, the Botzone seat (a real
Botzone-style program in its sandbox, per turn or kept running), its faults, the log export and
what its requests may show."""

import asyncio
import dataclasses
import json
import shutil
import subprocess
import sys
import time
from collections import Counter

import pytest
from conftest import ROOT

from cli.main import main as cli_main
from referee.conformance import run_file
from referee.match.local import run_match
from referee.match.spec import MatchSpec, TimeControl
from referee.play.selfplay import play as play_game
from referee.play.selfplay import random_policies
from referee.rules import (Bury, DecisionKind, IllegalActionError, Play, apply, check,
                           is_legal, legal_actions, rules_for)
from referee.rules.cards import Card
from referee.rules.events import Event
from referee.rules.families.two_deck.legal import lead_units
from referee.rules.record import MatchRecord, verify
from referee.rules.trump import TRUMP
from referee.seats.botzone_seat import (MEMORY_LIMIT_MB, BotzoneGame, base_id, kind_of,
                                        memory_limit_of, time_limit_of)
from referee.seats.manifest import ManifestError, load_manifest

RANDOM = load_manifest(ROOT / "sample_bots" / "python" / "random")
GREEDY = load_manifest(ROOT / "sample_bots" / "python" / "greedy")
SAMPLE = ROOT / "sample_bots" / "botzone"


def _botzone_bot(tmp_path, *args, name="bz", wrapper=None, fields="", data=None):
    """The sample Botzone bot in a folder of its own (a seat's uid may enter it), started with
    ``args``; ``wrapper`` is a program that imports it and misbehaves; ``fields`` more manifest
    lines; ``data`` files (name: text) of its ``data`` folder."""
    folder = tmp_path / name
    folder.mkdir(mode=0o755)
    shutil.copy(SAMPLE / "bot.py", folder / "bot.py")
    program = "bot.py"
    if wrapper is not None:
        (folder / "wrapper.py").write_text(wrapper)
        program = "wrapper.py"
    command = json.dumps(["python3", "-S", program, *args])  # (-S: no site, a quick start)
    (folder / "bot.toml").write_text(f'name = "{name}"\nversion = "1"\ncommand = {command}\n'
                                     f'protocol = "botzone"\n{fields}')
    for p in folder.iterdir():
        p.chmod(0o644)
    if data is not None:
        (folder / "data").mkdir(mode=0o755)
        for file, text in data.items():
            (folder / "data" / file).write_text(text)
            (folder / "data" / file).chmod(0o644)
    return load_manifest(folder)


def _table_scores(attacker_total: int, dealer: int) -> list[int]:
    """Botzone's score table, written out: the banker team 3 at 0 or less, 2 / 1 below 40 / 80, else
    the attackers 1, 2 from 120, 3 from 160."""
    if attacker_total < 80:
        team, n = dealer % 2, 3 if attacker_total <= 0 else 2 if attacker_total < 40 else 1
    else:
        team, n = 1 - dealer % 2, 1 if attacker_total < 120 else 2 if attacker_total < 160 else 3
    return [n if seat % 2 == team else 0 for seat in range(4)]


def _events(record: dict) -> list[dict]:
    return [e for game in record["games"] for e in game["events"]]


def _play(tmp_path, variant, bots, seed, tc=None, keep_sent=False):
    spec = MatchSpec(match_id=f"bz-{seed}", variant=variant, seed=seed, max_deals=1,
                     time_control=tc or TimeControl())
    return run_match(spec, bots, tmp_path / f"match-{seed}", keep_sent=keep_sent)


def test_the_ids_name_every_physical_card_once():
    """Botzone's encoding: id % 54 is rank * 4 + suit (A 2 .. K; s h c d), 52 LJ, 53 BJ."""
    assert base_id(Card.parse("AS")) == 0 and base_id(Card.parse("2H")) == 5
    assert base_id(Card.parse("10C")) == 38 and base_id(Card.parse("KD")) == 51
    assert (base_id(Card.parse("LJ")), base_id(Card.parse("BJ"))) == (52, 53)
    assert sorted(base_id(k) for k in range(54)) == list(range(54))
    assert all(kind_of(base_id(k)) == k == kind_of(base_id(k) + 54) for k in range(54))


def test_the_preset_vectors_pass_and_pin_the_botzone_options():
    """Every case of the preset's vectors passes; with an option of another variant some fail
    (each option the preset sets is pinned by a case)."""
    data = json.loads((ROOT / "tests" / "vectors" / "botzone-tractor.json").read_text())
    results = run_file(data, "botzone-tractor.json")
    assert len(results) >= 60 and all(r.ok for r in results), [r.line() for r in results
                                                                if not r.ok]
    for other in ({"level_tractors": True}, {"level_table": "fry_table"},
                  {"overturn": "level_pairs"}, {"single_deal": False},
                  {"kitty_multiplier": "doubling"}, {"failed_throw": "unit"}):
        assert not all(r.ok for r in run_file(dict(data, options=other), "x")), other


def _check_seat(seat, per_turn: bool) -> None:
    """A per-turn bot was started once for each request it answered; a kept-running one once
    a deal (a Botzone game), and then given each request alone."""
    if per_turn:
        assert seat.turns == sum(g.asked for g in seat.games) > 10
    else:
        assert seat.turns == len(seat.games) >= 1
    assert sum(len(g.requests) for g in seat.games) > 30


def test_botzone_tractor_in_both_modes_replays_and_exports_its_log(tmp_path):
    """Acceptance 1 and 2 under botzone-tractor: the sample bot started afresh each turn (seat 0)
    and its partner kept running (seat 2) play a whole match against gRPC bots with no fault;
    the record verifies; the score is the table's; ``arena botzone log`` prints exactly the
    history each was given."""
    per_turn, keep = _botzone_bot(tmp_path), _botzone_bot(tmp_path, "--keep-running",
                                                           name="keep")
    result, record, runner = _play(tmp_path, "botzone-tractor", [per_turn, RANDOM, keep, GREEDY],
                                   "tractor")
    assert result["forfeit"] is None and record["faults"] == [], record["faults"]
    game = MatchRecord.from_dict(json.loads(json.dumps(record["games"][0])))
    assert verify(game) == []
    ended = next(e for e in _events(record) if e["event"] == "DealEnded")
    dealer = next(e["seat"] for e in reversed(_events(record)) if e["event"] == "DealerSet")
    assert result["scores"] == _table_scores(ended["attacker_total"], dealer)
    assert result["scores"] == game.result["scores"]
    _check_seat(runner.seats[0], per_turn=True)
    _check_seat(runner.seats[2], per_turn=False)
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record))
    for seat in (0, 2):
        log = tmp_path / f"seat{seat}.jsonl"
        assert cli_main(["botzone", "log", str(path), "--seat", str(seat), "--out", str(log)]) == 0
        # (a response's ids in the record's order: the order the bot gave is not kept)
        history = [{"requests": g.requests, "responses": [sorted(r) for r in g.responses]}
                   for g in runner.seats[seat].games]
        exported = [json.loads(line) for line in log.read_text().splitlines()]
        for game in exported:
            game["responses"] = [sorted(r) for r in game["responses"]]
        assert exported == history
    bad = subprocess.run([sys.executable, "-m", "cli", "botzone", "log",
                          str(tmp_path / "none.json"), "--seat", "0"], cwd=ROOT,
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "none.json: cannot be read" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_two_deck_80_in_both_modes(tmp_path):
    """Acceptance 1 under two-deck-80 (the mapping is exact but for the declaration rounds after
    the deal and after the burial, which a Botzone bot is not asked: it passes): kept running
    (seat 1) and per turn (seat 3), no fault, the record verifies, no Botzone score."""
    keep = _botzone_bot(tmp_path, "--keep-running", "--linked-levels", name="keep")
    per_turn = _botzone_bot(tmp_path, "--linked-levels")
    result, record, runner = _play(tmp_path, "two-deck-80", [RANDOM, keep, GREEDY, per_turn],
                                   "eighty")
    assert result["forfeit"] is None and record["faults"] == [], record["faults"]
    assert all(verify(MatchRecord.from_dict(json.loads(json.dumps(g)))) == []
               for g in record["games"])
    _check_seat(runner.seats[1], per_turn=False)
    _check_seat(runner.seats[3], per_turn=True)
    assert "scores" not in result


MISBEHAVE = r"""
import json, sys, time
import bot

def wrong(request, hand):
    # the first play request gets the wrong answer
    kind = sys.argv[1]
    if kind == "garbage":
        return "this is not json"
    if kind == "illegal":
        return json.dumps({"response": hand})
    if kind == "other":
        missing = min(set(range(108)) - set(hand))
        return json.dumps({"response": [missing]})
    time.sleep(30)  # (a bot that never answers: the behaviour under test)

b = bot.Bot(False)
first = json.loads(sys.stdin.readline())
b.requests, b.responses = first["requests"], first["responses"]
while True:
    request = b.requests[-1]
    if request["stage"] == "play":
        print(wrong(request, b.hand()), flush=True)
        sys.exit(0)
    response = b.answer()
    b.responses.append(response)
    print(json.dumps({"response": response}), flush=True)
    print(bot.KEEP_RUNNING, flush=True)
    b.requests.append(json.loads(sys.stdin.readline()))
"""


@pytest.mark.parametrize("kind, fault, reasons", [
    ("garbage", "garbage", ("unreadable Botzone answer 'this is not json'",)),
    ("illegal", "illegal", ("a lead must be one suit", " to follow, not 25")),  # (any lead)
    ("other", "garbage", ("which is not in its hand",)),
    ("timeout", "timeout", ("no answer within 400 ms and the time bank",)),
])
def test_a_bad_answer_is_the_fault_policys_with_botzones_error_scores(tmp_path, kind, fault,
                                                                      reasons):
    """Acceptance 3: garbage, an illegal play, a card id of another seat, no answer in time:
    the fault and its reason, and with one strike allowed the forfeit and Botzone's error
    scores (-3 the offender, 0 its partner, +1 each opponent)."""
    bz = _botzone_bot(tmp_path, kind, wrapper=MISBEHAVE)
    tc = TimeControl(per_decision_ms=400, bank_ms=0, max_strikes=1)
    result, record, _ = _play(tmp_path, "botzone-tractor", [RANDOM, RANDOM, RANDOM, bz],
                              f"fault-{kind}", tc=tc)
    faults = record["faults"]
    assert [f["kind"] for f in faults] == [fault] and faults[0]["seat"] == 3, faults
    assert any(reason in faults[0]["reason"] for reason in reasons), faults[0]["reason"]
    assert result["forfeit"]["seat"] == 3 and result["scores"] == [1, 0, 1, -3]


def test_a_botzone_seats_requests_show_only_what_it_may_see(tmp_path):
    """Acceptance 4, the audit of what a Botzone seat is sent: (a) its requests are made from
    the messages the referee sent that seat and nothing else (rebuilt from them alone, they are
    the same); (b) checked against the record, every card it is delivered is one dealt to it
    (in order) or the kitty it took up, and every trick it is shown is the public plays up to
    its turn; (c) the table it is told is the public facts."""
    from referee.seats.botzone_seat import DECISION_OF_PB

    bz = _botzone_bot(tmp_path, "--keep-running")
    result, record, runner = _play(tmp_path, "botzone-tractor", [GREEDY, bz, RANDOM, RANDOM],
                                   "hidden", keep_sent=True)
    assert result["forfeit"] is None, record["faults"]
    live = runner.seats[1].games[0]
    # (a) rebuilt from the seat's own messages
    game = None
    for _, _, msg in runner.sent[1]:
        body = msg.WhichOneof("body")
        events = (msg.notice.events if body == "notice" else
                  msg.request.events if body == "request" else [])
        for e in events:
            d = json.loads(e.json)
            if d["event"] == "DealStarted":
                game = BotzoneGame(1)
            game.see(Event.from_dict(d))
        if body == "request":
            _, request = game.turn(DECISION_OF_PB[msg.request.kind],
                                   msg.request.observation.phase)
            if request is not None:
                game.answer(live.responses[len(game.requests) - 1])
    assert game.requests == live.requests and len(live.requests) > 40
    # (b) against the record
    events = _events(record)
    dealt = [e["card"] for e in events if e["event"] == "CardDealt" and e["seat"] == 1]
    delivered = [r["deliver"] for r in live.requests if r["stage"] == "deal"]
    assert all(len(d) == 1 for d in delivered)
    assert [str(Card(kind_of(d[0]))) for d in delivered] == dealt
    covers = [r["deliver"] for r in live.requests if r["stage"] == "cover"]
    taken = [e["cards"] for e in events if e["event"] == "KittyTaken" and e["seat"] == 1]
    assert [[str(Card(kind_of(i))) for i in c] for c in covers] == taken
    shown_before_turn = []  # the current trick's plays before each play of seat 1
    trick: list = []
    for e in events:
        if e["event"] == "Played":
            if e["lead"]:
                trick = []
            if e["seat"] == 1:
                shown_before_turn.append([Counter(p) for p in trick])
            trick.append(e["cards"])
    plays = [r for r in live.requests if r["stage"] == "play"]
    assert len(plays) == len(shown_before_turn) > 10
    for request, expected in zip(plays, shown_before_turn):
        current = request["history"][1]
        assert [Counter(str(Card(kind_of(i))) for i in p) for p in current] == expected
        seen = [i for trick_ in request["history"][:2] for p in trick_ for i in p]
        assert len(seen) == len(set(seen))  # one id per physical card
    # (c) the table: public facts only
    for request in live.requests:
        assert set(request) <= {"stage", "deliver", "history", "global", "playerpos"}
        assert set(request["global"]) == {"level", "banking", "score"}
        assert set(request["global"]["banking"]) == {"banker", "major", "called", "snatched"}
    final = plays[-1]["global"]
    dealer = next(e["seat"] for e in events if e["event"] == "DealerSet")
    assert final["banking"]["banker"] == dealer


def test_a_botzone_bot_is_refused_a_game_it_cannot_play(tmp_path):
    """Single-deck has no Botzone form (its own decisions, no ids for a third copy): the seat
    says so and forfeits at its first turn, without starting the bot."""
    bz = _botzone_bot(tmp_path)
    result, record, runner = _play(tmp_path, "single-deck", [bz, RANDOM, RANDOM, RANDOM],
                                   "single")
    assert result["forfeit"]["seat"] == 0 and runner.seats[0].turns == 0
    assert record["faults"][0]["reason"] == ("seat 0 is a Botzone Tractor bot: it plays the "
                                             "two-deck games, not single-deck")


def test_a_bot_that_ends_without_an_answer_is_a_garbage_answer_not_a_forfeit(tmp_path):
    """A program that ends without an answer is started again the next turn, with its
    history: a strike and the end of its log in the reason, and the match goes on."""
    crash = r"""
import json, sys
import bot
b = bot.Bot(False)
first = json.loads(sys.stdin.readline())
b.requests, b.responses = first["requests"], first["responses"]
restarted = any(r["stage"] == "play" for r in b.requests)
while True:
    response = b.answer()
    b.responses.append(response)
    print(json.dumps({"response": response}), flush=True)
    print(bot.KEEP_RUNNING, flush=True)
    request = json.loads(sys.stdin.readline())
    if request["stage"] == "play" and not restarted:
        raise SystemExit("no answer this time")  # once: the history shows it the next time
    b.requests.append(request)
"""
    bz = _botzone_bot(tmp_path, wrapper=crash)
    result, record, runner = _play(tmp_path, "botzone-tractor", [RANDOM, bz, RANDOM, RANDOM],
                                   "crash")
    assert result["forfeit"] is None and result["strikes"] == [0, 1, 0, 0]
    [fault] = record["faults"]
    assert fault["kind"] == "garbage" and fault["reason"] == (
        "its program ended without an answer (it exited with status 1: 'no answer this time')")
    assert runner.seats[1].turns == 2  # started again after the crash, then kept running


# -- Botzone's leniencies, as options of the two-deck family ----------------------------------
def _same_shape_answers(state, strict_rules):
    """The follows the rules list now that the strict rule refuses."""
    strict = state.copy()
    strict.rules = strict_rules
    return set(legal_actions(state)) - set(legal_actions(strict)), strict


def test_same_shape_following_lets_the_judges_off_suit_answers_stand():
    """``following = "same_shape"`` (the judge's leniency): a follower with no pair (tractor)
    of the suit led, though it holds some of the suit, may answer with a pair (tractor) of
    another suit; the engine lists it, judges it legal (the strict rules refuse it), a trump
    one wins the trick as a ruff, and the record replays."""
    lenient = rules_for("botzone-tractor", {"following": "same_shape"})
    strict_rules = rules_for("botzone-tractor")
    seen = {"answers": 0, "ruffs_won": 0}

    def policy(base):
        def choose(s):
            if s.decision == DecisionKind.FOLLOW:
                extra, strict = _same_shape_answers(s, strict_rules)
                for action in sorted(extra, key=str):
                    assert is_legal(s, action, s.turn) and not is_legal(strict, action, s.turn), action
                    seen["answers"] += 1
                trumps = [a for a in extra if s.ctx.cls[a.cards[0]] == TRUMP]
                if trumps and s.trick_best == 0 and s.trick_key[0] == 0:  # nothing ruffed yet
                    after, events = apply(s, trumps[0], s.turn)
                    won = [e.seat for e in events if type(e).__name__ == "TrickWon"]
                    assert won == [s.turn] if won else after.trick_best == len(after.trick) - 1
                    seen["ruffs_won"] += 1
                    return trumps[0]
            return base(s)
        return choose

    for seed in range(12):
        policies = [policy(p) for p in random_policies(f"shape:{seed}")]
        state, record, _ = play_game(lenient, f"shape:{seed}", policies, record=True)
        assert verify(record) == []
    assert seen["answers"] > 10 and seen["ruffs_won"] > 1, seen


def test_at_most_burial_keeps_the_rest_in_the_dealers_hand_to_the_end():
    """``burial_count = "at_most"`` (the judge does not count the burial): the dealer may bury
    fewer than 8 and keeps the rest; no lead is longer than every other hand; the deal ends when
    the other hands are empty, the dealer's cards left over. More than 8 stays illegal, and the
    strict rule (the default) refuses fewer."""
    lenient = rules_for("botzone-tractor", {"burial_count": "at_most"})
    refused: list[str] = []

    for kept in range(6):
        buried = 8 - kept
        banker = []

        def policy(base):
            def choose(s):
                if s.decision == DecisionKind.BURY:
                    hand = s.hand(s.turn)
                    assert not is_legal(s, Bury(hand[:9]), s.turn)
                    strict = s.copy()
                    strict.rules = rules_for("botzone-tractor")
                    assert not is_legal(strict, Bury(hand[:buried]), s.turn) or buried == 8
                    banker.append(s.turn)
                    return Bury(hand[:buried])
                if s.decision == DecisionKind.LEAD:
                    others = min(sum(s.hands[x]) for x in range(4) if x != s.turn)
                    for cards in lead_units(s, s.turn):
                        if len(cards) > others:
                            try:
                                check(s, Play(cards), s.turn)
                            except IllegalActionError as e:
                                refused.append(str(e))
                            else:
                                raise AssertionError(f"{cards} led over {others} cards")
                return base(s)
            return choose

        policies = [policy(p) for p in random_policies(f"bury:{kept}")]
        state, record, _ = play_game(lenient, f"bury:{kept}", policies, record=True)
        assert state.is_terminal and verify(record) == []
        assert [sum(h) for h in state.hands] == [kept if x == banker[0] else 0 for x in range(4)]
    assert refused and all("may lead at most" in r for r in refused), refused[:3]


# -- a Botzone seat's time limit, USER and /data ----------------------------------------------
def test_the_manifests_time_limit_is_the_turns_limit(tmp_path):
    """``time_limit = 0.5`` in the manifest: a bot that sleeps through its first play is a
    timeout at 0.5 s, well inside the match's 10 s allowance, and the reason names the limit
    and where it comes from; without the field, Botzone's usual limit for the language."""
    bz = _botzone_bot(tmp_path, "timeout", wrapper=MISBEHAVE, fields="time_limit = 0.5\n")
    assert bz.time_limit == 0.5 and time_limit_of(bz) == 0.5
    tc = TimeControl(per_decision_ms=10_000, bank_ms=0, max_strikes=1)
    started = time.monotonic()
    result, record, _ = _play(tmp_path, "botzone-tractor", [RANDOM, RANDOM, bz, RANDOM],
                              "limit", tc=tc)
    [fault] = record["faults"]
    assert fault["kind"] == "timeout" and fault["seat"] == 2, fault
    assert fault["reason"] == (f"no answer within 0.5 s, its Botzone time limit per turn (the "
                               f"time_limit of {bz.path})"), fault["reason"]
    assert result["forfeit"]["seat"] == 2 and time.monotonic() - started < 9
    plain = _botzone_bot(tmp_path, name="plain")
    assert plain.time_limit is None and time_limit_of(plain) == 6.0  # (python3: Botzone's 6 s)
    compiled = dataclasses.replace(plain, command=("./bot",))
    assert time_limit_of(compiled) == 1.0


HUNGRY = r"""
import json, sys
import bot
# the first play: 320 MiB touched (above Botzone's 256, well below the season's 2048)
if any(r["stage"] == "play" for r in json.loads(sys.stdin.readline() or "{}")["requests"]):
    hoard = bytearray(320 * 1024 * 1024)
    print("HOARD", len(hoard), file=sys.stderr, flush=True)
    sys.exit(0)
print(json.dumps({"response": []}), flush=True)
"""


def test_a_botzone_bot_is_held_to_its_memory_limit(tmp_path):
    """Botzone's 256 MiB bound a Botzone bot's sandbox, below the season's own limit: a
    program that takes 320 MiB at its first play dies without an answer (a strike that names
    its exit), while with ``memory_limit = 512`` in its manifest the same program gets the
    memory (it exits after taking it, as written)."""
    tight = _botzone_bot(tmp_path, name="tight", wrapper=HUNGRY)
    assert tight.memory_limit is None and memory_limit_of(tight) == MEMORY_LIMIT_MB == 256
    roomy = _botzone_bot(tmp_path, name="roomy", wrapper=HUNGRY, fields="memory_limit = 512\n")
    assert memory_limit_of(roomy) == 512
    tc = TimeControl(max_strikes=1)
    for bot, seed in ((tight, "tight"), (roomy, "roomy")):
        result, record, _ = _play(tmp_path, "botzone-tractor", [RANDOM, bot, RANDOM, RANDOM],
                                  seed, tc=tc)
        assert record["sandbox_limits"]["memory_mb"] > 320  # (the season's: not the bound)
        [fault] = record["faults"]
        assert fault["seat"] == 1 and fault["kind"] == "garbage", fault
        log = (tmp_path / f"match-{seed}" / "seat1.log").read_text()
        if bot is tight:
            assert "MemoryError" in fault["reason"] and "HOARD" not in log, fault["reason"]
        else:
            assert "exited with status 0" in fault["reason"] and "HOARD 335544320" in log


@pytest.mark.parametrize("line, expected", [
    ("memory_limit = 8", "field 'memory_limit' = 8: expected Botzone's memory limit in MiB, a "
                         "whole number from 16 to 4096 (Botzone's usual one is 256)"),
    ("memory_limit = 256.5", "field 'memory_limit' = 256.5: expected Botzone's memory limit"),
    ("time_limit = 0", "field 'time_limit' = 0: expected Botzone's time limit per turn in "
                       "seconds, a number above 0 and at most 60"),
    ("time_limit = \"1\"", "field 'time_limit' = '1': expected Botzone's time limit"),
    ("time_limit = true", "field 'time_limit' = True: expected Botzone's time limit"),
    ("time_limit = 600", "field 'time_limit' = 600: expected"),
    ("data = \"../elsewhere\"", "field 'data' = '../elsewhere': expected a folder inside the "
                                 "bot's own"),
    ("data = \"missing\"", "field 'data' = 'missing': no such folder"),
])
def test_a_bad_time_limit_or_data_folder_is_a_clear_error(tmp_path, line, expected):
    with pytest.raises(ManifestError) as e:
        _botzone_bot(tmp_path, fields=line + "\n")
    assert str(e.value).startswith(str(tmp_path / "bz" / "bot.toml") + ": " + expected), e.value
    grpc = tmp_path / "grpc"
    grpc.mkdir()
    (grpc / "bot.toml").write_text('name = "g"\nversion = "1"\ncommand = ["./g"]\n'
                                   'time_limit = 1\n')
    with pytest.raises(ManifestError, match=r"bot.toml: field 'time_limit': only a Botzone bot "
                                            r"\(protocol = \"botzone\"\) has one, not a grpc bot"):
        load_manifest(grpc)


PROBE = r"""
import json, os, sys
import bot

def attempt(write):
    try:
        write()
        return "written"
    except OSError as e:
        return e.strerror

def in_data():
    with open("/data/new.txt", "w") as f:
        f.write("x")

def in_own_folder():
    with open("new.txt", "w") as f:
        f.write("x")

with open("/data/book.txt") as f:
    book = f.read()
facts = {"user": os.environ.get("USER"), "book": book, "data": attempt(in_data),
         "own": attempt(in_own_folder), "listed": sorted(os.listdir("/data"))}
print("PROBE " + json.dumps(facts), file=sys.stderr, flush=True)
bot.main()
"""


def test_a_botzone_bot_has_user_and_its_data_folder_read_only(tmp_path):
    """A sandboxed Botzone bot (a real process, per turn) finds ``USER`` set and its manifest's
    ``data`` folder at ``/data``: it reads a file there, and can write neither there nor in its
    own folder; the match plays on with no fault."""
    bz = _botzone_bot(tmp_path, wrapper=PROBE, fields='data = "data"\n',
                      data={"book.txt": "opening book"})
    assert bz.data == "data" and bz.data_folder == tmp_path / "bz" / "data"
    result, record, runner = _play(tmp_path, "botzone-tractor", [bz, GREEDY, RANDOM, RANDOM],
                                   "data")
    assert result["forfeit"] is None and record["faults"] == [], record["faults"]
    lines = [json.loads(line.split(" ", 1)[1]) for line in
             (tmp_path / "match-data" / "seat0.log").read_text().splitlines()
             if line.startswith("PROBE ")]
    assert len(lines) == runner.seats[0].turns > 10  # one a turn: each program saw the same
    assert all(facts == {"user": "botzone", "book": "opening book",
                         "data": "Read-only file system", "own": "Read-only file system",
                         "listed": ["book.txt"]} for facts in lines), lines[0]
    assert sorted(p.name for p in bz.data_folder.iterdir()) == ["book.txt"]


TURN_MARK = r"""
import sys
import bot
print("TURN", file=sys.stderr, flush=True)
bot.main()
"""


def test_the_last_turns_log_is_kept_when_the_matchs_end_lands_while_its_program_is_ended(
        tmp_path, monkeypatch):
    """Forced: every per-turn program's ending is held, after its process has stopped and
    before its log is kept, until the seat's next request or the match's end, so the match's
    end always cancels the last turn's ending right there. Every turn's log is in the seat's
    log all the same (once, a clean-clone run found 32 turns' lines for 33 turns)."""
    from referee.seats import botzone_seat
    program_cls, seat_cls = botzone_seat._Program, botzone_seat.BotzoneSeat
    real_stop, real_request, real_close = program_cls.stop, seat_cls.request, seat_cls.close
    moved: dict[int, asyncio.Event] = {}  # a seat's next request came, or the match ended

    def event(seat):
        return moved.setdefault(seat, asyncio.Event())

    async def held_stop(self):
        await real_stop(self)
        seat = self.turn_log.name.split(".")[0]  # seat0.turn7.log
        await event(seat).wait()
        event(seat).clear()

    def request(self, message, deadline, watch=botzone_seat.UNWATCHED):
        event(f"seat{self.seat}").set()
        return real_request(self, message, deadline, watch)

    def close(self):
        event(f"seat{self.seat}").set()  # (the cancel below lands before the ending wakes)
        return real_close(self)

    monkeypatch.setattr(program_cls, "stop", held_stop)
    monkeypatch.setattr(seat_cls, "request", request)
    monkeypatch.setattr(seat_cls, "close", close)
    bz = _botzone_bot(tmp_path, wrapper=TURN_MARK)
    result, record, runner = _play(tmp_path, "botzone-tractor", [bz, GREEDY, RANDOM, RANDOM],
                                   "held")
    assert result["forfeit"] is None and record["faults"] == [], record["faults"]
    log = (tmp_path / "match-held" / "seat0.log").read_text()
    assert log.count("TURN\n") == runner.seats[0].turns > 10
    assert not list((tmp_path / "match-held").glob("seat0.turn*.log"))
