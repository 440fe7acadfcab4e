"""The replay viewer's hands are sorted as a player holds them: once the engine has fixed the
trump, every trump before every side card, strongest first in the engine's own trump order;
each side suit together, high to low; before that, by suit. Checked on the golden records of
every variant, against the trump context the engine itself holds after each event."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.match.matchfile import MatchFile
from referee.rules import apply, parse_action
from referee.rules.cards import Card
from web.replay import replay_of

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
VARIANTS = ("two-deck-80", "two-deck-fry", "single-deck", "three-deck")


def _engine_orders(match: MatchFile) -> list:
    """The engine's trump context (``State.ctx``) after each event of the match."""
    out = []
    for game in match.games:
        state = game.new_state()
        for seat, text in game.actions:
            state, events = apply(state, parse_action(text), seat)
            out += [state.ctx] * len(events)
    return out


def _by_suit(cards: list[Card]) -> bool:
    """Each suit together, each high to low (jokers, if any, first)."""
    suits = [c.suit for c in cards]
    runs = [s for i, s in enumerate(suits) if i == 0 or suits[i - 1] != s]
    side = [c for c in cards if c.suit is not None]
    return (len(runs) == len(set(runs)) and suits[:suits.count(None)] == [None] *
            suits.count(None) and all(a.rank >= b.rank for a, b in zip(side, side[1:])
                                      if a.suit == b.suit))


@pytest.mark.parametrize("variant", VARIANTS)
def test_shown_hands_hold_trumps_first_in_the_engines_order(variant):
    match = MatchFile.from_dict(json.loads((GOLDEN / f"{variant}.json").read_text())["record"])
    every, orders = match.events(), _engine_orders(match)
    assert len(orders) == len(every)
    mixed = unfixed = 0
    for seat in (None, 1):
        shown = [o for e, o in zip(every, orders) if seat is None or e.visible(seat)]
        at = 0
        for step in replay_of(match, seat)["steps"]:
            at += len(step["events"])
            order = shown[at - 1]
            for hand in step["state"]["hands"]:
                if not hand:
                    continue
                cards = [Card.parse(t) for t in hand]
                if order is None:
                    assert _by_suit(cards), (step["title"], hand)
                    unfixed += 1
                    continue
                trump = [order.is_trump(c) for c in cards]
                n = sum(trump)
                assert trump == [True] * n + [False] * (len(cards) - n), (step["title"], hand)
                strength = [order.pos[c] for c in cards[:n]]
                assert strength == sorted(strength, reverse=True), (step["title"], hand)
                assert _by_suit(cards[n:]), (step["title"], hand)
                mixed += 0 < n < len(cards)
    assert mixed > 50 and unfixed > 0
