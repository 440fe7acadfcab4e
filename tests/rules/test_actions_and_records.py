"""Bad input gets a clear error and leaves the state as it was; records replay exactly."""

import copy
import json
import subprocess
import sys

import pytest

from conftest import ROOT
from referee.play.chance import chance_action
from referee.play.random_play import random_action
from referee.rules import (Bury, IllegalActionError, InvalidActionError, Play,
                           Card, apply, check, is_legal, legal_actions, new_game, observe,
                           parse_action, rules_for)
from referee.rules.actions import DecisionKind
from referee.rules.record import MatchRecord, replay, verify
from referee.rules.state import CHANCE, State
from referee.play.selfplay import play

import random


def _advance_to(kind, variant="two-deck-fry", seed="bad-input", options=None):
    rules = rules_for(variant, options)
    s = new_game(rules)
    rng = random.Random(seed)
    while s.decision != kind:
        if s.turn == CHANCE:
            s, _ = apply(s, chance_action(s, seed))
        else:
            s, _ = apply(s, random_action(s, rng), s.turn)
    return s


def _snapshot(s: State):
    return (tuple(tuple(h) for h in s.hands), s.phase, s.turn, s.decision, s.trick, s.kitty,
            tuple(observe(s, i) for i in range(4)))


def test_card_text_round_trips():
    for text in ("10H", "QS", "2C", "AD", "LJ", "BJ"):
        c = Card.parse(text)
        assert str(c) == text and eval(repr(c)) == c
    assert Card.parse("10h") == Card.parse("10H")


@pytest.mark.parametrize("text", ["1H", "10X", "", "J", "HJ", "11S", "BJJ"])
def test_malformed_card_names_the_text(text):
    with pytest.raises(InvalidActionError) as e:
        Card.parse(text)
    assert repr(text) in str(e.value) and "expected" in str(e.value)


def test_malformed_action_text():
    with pytest.raises(InvalidActionError, match="'play 1X'"):
        parse_action("play 1X")
    with pytest.raises(InvalidActionError, match="expected one of"):
        parse_action("discard AH")
    assert parse_action("play AH AH") == Play(parse_action("play AH AH").cards)
    assert parse_action("play KH AH") == parse_action("play AH KH")


def test_card_not_held_is_rejected_and_state_unchanged():
    s = _advance_to(DecisionKind.LEAD)
    before = _snapshot(s)
    seat = s.turn
    missing = next(k for k in range(54) if s.hands[seat][k] == 0)
    with pytest.raises(IllegalActionError) as e:
        apply(s, Play((missing,)), seat)
    assert str(Card(missing)) in str(e.value) and f"seat {seat}" in str(e.value)
    assert _snapshot(s) == before


def test_out_of_turn_is_rejected_and_state_unchanged():
    s = _advance_to(DecisionKind.LEAD)
    before = _snapshot(s)
    other = (s.turn + 1) % 4
    card = next(k for k in range(54) if s.hands[other][k])
    with pytest.raises(IllegalActionError, match=f"out of turn: seat {other} acted, but it is "
                                                 f"seat {s.turn}'s turn"):
        apply(s, Play((card,)), other)
    with pytest.raises(IllegalActionError, match="out of turn"):
        apply(s, chance_action(_advance_to(DecisionKind.SHUFFLE), "x"))
    assert _snapshot(s) == before


def test_wrong_decision_kind_is_rejected_and_state_unchanged():
    s = _advance_to(DecisionKind.BURY)
    before = _snapshot(s)
    card = next(k for k in range(54) if s.hands[s.turn][k])
    with pytest.raises(IllegalActionError, match="wrong decision kind: the state waits for a "
                                                 "bury decision"):
        apply(s, Play((card,)), s.turn)
    with pytest.raises(IllegalActionError, match="exactly 8 cards"):
        apply(s, Bury((card,)), s.turn)
    assert _snapshot(s) == before


def test_illegal_follow_says_why():
    # find a follow decision where the seat holds the led suit and try to discard elsewhere
    seed = 0
    while True:
        s = _advance_to(DecisionKind.FOLLOW, seed=f"follow:{seed}")
        fmt = s.trick_fmt
        hand = s.hands[s.turn]
        suit = [k for k in s.ctx.members[fmt.cls] for _ in range(hand[k])]
        other = [k for k in range(54) if s.ctx.cls[k] != fmt.cls for _ in range(hand[k])]
        if len(suit) >= fmt.size and len(other) >= fmt.size:
            break
        seed += 1
    before = _snapshot(s)
    bad = Play(tuple(other[:fmt.size]))
    assert not is_legal(s, bad, s.turn)
    with pytest.raises(IllegalActionError, match="must follow with"):
        check(s, bad, s.turn)
    assert bad not in legal_actions(s)
    assert _snapshot(s) == before


def test_a_lead_mixing_suits_says_which():
    s = _advance_to(DecisionKind.LEAD)
    hand = s.hands[s.turn]
    classes = {}
    for k in range(54):
        if hand[k]:
            classes.setdefault(s.ctx.cls[k], k)
    a, b = list(classes.values())[:2]
    with pytest.raises(IllegalActionError, match="a lead must be one suit"):
        apply(s, Play((a, b)), s.turn)


@pytest.mark.parametrize("variant, options, whole", [
    ("two-deck-80", None, True), ("two-deck-80", {"failed_throw": "first_card"}, False),
    ("botzone-tractor", None, False), ("botzone-tractor", {"failed_throw": "unit"}, True)])
def test_a_failed_throw_plays_the_unit_or_its_first_card(variant, options, whole):
    """``failed_throw`` through the engine: a throw of a side A and a low pair, against a
    higher pair in another hand, plays the whole pair (``"unit"``) or its first card
    (``"first_card"``, Botzone's judge); the attempt, the penalty and the trick's lead follow."""
    s = _advance_to(DecisionKind.LEAD, variant, seed="throw", options=options).copy()
    ctx, seat = s.ctx, s.turn
    side = next(c for c in range(4) if c != ctx.suit)
    top, mid, low = ctx.members[side][0], ctx.members[side][-2], ctx.members[side][-1]
    hands = [list(h) for h in s.hands]
    for h in hands:
        for k in ctx.members[side]:
            h[k] = 0
    hands[seat][top], hands[seat][low] = 1, 2
    hands[(seat + 2) % 4][mid] = 2
    s.hands = hands
    after, events = apply(s, Play((top, low, low)), seat)
    failed = [e for e in events if type(e).__name__ == "ThrowFailed"]
    assert len(failed) == 1 and failed[0].penalty == 20
    assert sorted(failed[0].attempted) == sorted((top, low, low))
    assert tuple(failed[0].forced) == ((low, low) if whole else (low,))
    assert after.trick == ((seat, tuple(failed[0].forced)),)
    assert after.hands[seat][top] == 1 and after.hands[seat][low] == (0 if whole else 1)


def test_earlier_states_are_never_changed():
    rules = rules_for("two-deck-80")
    s = new_game(rules)
    rng = random.Random(5)
    history = []
    while s.deal_no == 0:
        history.append((s, _snapshot(s)))
        if s.turn == CHANCE:
            s, _ = apply(s, chance_action(s, 5))
        else:
            s, _ = apply(s, random_action(s, rng), s.turn)
    for state, snap in history[::7]:
        assert _snapshot(state) == snap


@pytest.mark.parametrize("variant", ["two-deck-80", "two-deck-fry", "single-deck", "three-deck"])
def test_record_replays_every_event_and_the_result(variant, tmp_path):
    rules = rules_for(variant)
    state, rec, _ = play(rules, f"replay:{variant}", max_deals=3, record=True)
    data = json.loads(json.dumps(rec.to_dict()))
    again = MatchRecord.from_dict(data)
    assert verify(again) == []
    final, events = replay(again)
    assert events == rec.events and final.levels == state.levels
    # the CLI agrees
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    out = subprocess.run([sys.executable, "-m", "cli", "replay", str(path), "--verify"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("verified:")
    # a tampered record does not verify
    bad = copy.deepcopy(data)
    bad["events"][5]["card"] = "BJ" if bad["events"][5].get("card") != "BJ" else "LJ"
    assert verify(MatchRecord.from_dict(bad))
    path.write_text(json.dumps(bad))
    out = subprocess.run([sys.executable, "-m", "cli", "replay", str(path), "--verify"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 1 and "DIFFERS" in out.stdout
    # a seat's view shows its own dealt cards and nobody else's
    out = subprocess.run([sys.executable, "-m", "cli", "replay", str(path.with_name("r.json")), "--seat", "2"],
                         cwd=ROOT, capture_output=True, text=True)
    dealt = [json.loads(x) for x in out.stdout.splitlines() if '"CardDealt"' in x]
    assert dealt and all(d["seat"] == 2 for d in dealt)


def test_record_with_an_illegal_action_names_it():
    rules = rules_for("two-deck-fry")
    _, rec, _ = play(rules, "bad-record", max_deals=1, record=True)
    data = rec.to_dict()
    i = next(i for i, (seat, text) in enumerate(data["actions"]) if text.startswith("play"))
    data["actions"][i] = [data["actions"][i][0], "play BJ BJ BJ"]
    with pytest.raises(ValueError, match=f"action {i}"):
        replay(MatchRecord.from_dict(data))


def test_same_seed_same_deal():
    rules = rules_for("two-deck-80")
    a = play(rules, 42, max_deals=2, record=True)[1]
    b = play(rules, 42, max_deals=2, record=True)[1]
    c = play(rules, 43, max_deals=2, record=True)[1]
    assert a.actions == b.actions and a.actions != c.actions


def test_unknown_option_and_variant():
    with pytest.raises(ValueError, match="unknown option 'after_aces'"):
        rules_for("two-deck-fry", {"after_aces": "win"})
    with pytest.raises(ValueError, match="'after_ace' = 'never'"):
        rules_for("two-deck-fry", {"after_ace": "never"})
    with pytest.raises(ValueError, match="unknown variant"):
        rules_for("four-deck")


def test_three_deck_result_carries_match_points_and_titles():
    rules = rules_for("three-deck")
    state, rec, _ = play(rules, "titles", max_deals=4, record=True)
    result = rec.result
    assert result["match_points"] == list(state.match_points)
    assert len(result["titles"]) == 4 and all(isinstance(t, str) for t in result["titles"])
    # partners score alike and the deal's points balance (tribute aside, which also balances)
    assert sum(state.match_points) == 0
    from referee.rules.families.three_deck.scoring import title
    assert result["titles"] == [title(p) for p in state.match_points]
    assert title(0) == "赤脚" and title(-5) == "赤脚" and title(144) == "轿车" and title(10**6) == "神"


@pytest.mark.parametrize("variant", ["two-deck-80", "two-deck-fry", "single-deck", "three-deck"])
def test_actions_and_events_read_back_from_their_text(variant):
    """Every action of a golden record round-trips through str / repr / parse, and every event
    through to_dict / Event.from_dict, to an equal value."""
    from referee.rules import actions as actions_module
    from referee.rules.actions import parse_action
    from referee.rules.events import Event
    golden = json.loads((ROOT / "tests" / "golden" / f"{variant}.json").read_text())
    seen = set()
    for _, text in golden["record"]["actions"]:
        action = parse_action(text)
        assert str(action) == text
        assert type(action).parse(text) == action
        assert eval(repr(action), vars(actions_module)) == action
        seen.add(type(action).__name__)
    assert {"Shuffle", "Bury", "Play"} <= seen
    for data in golden["record"]["events"]:
        event = Event.from_dict(data)
        assert event.to_dict() == {k: v for k, v in data.items() if k != "visible_to"}
        assert Event.from_dict(event.to_dict()) == event


def test_a_parse_of_the_wrong_kind_and_an_unknown_event_are_named():
    from referee.rules.actions import Play
    from referee.rules.events import Event
    with pytest.raises(InvalidActionError, match="'pass' is a Pass action, not a Play"):
        Play.parse("pass")
    with pytest.raises(ValueError, match="unknown event 'Nope'"):
        Event.from_dict({"event": "Nope"})
    with pytest.raises(ValueError, match=r"event Played: unknown field\(s\) \['extra'\]"):
        Event.from_dict({"event": "Played", "seat": 0, "cards": ["AH"], "lead": True,
                         "extra": 1})
