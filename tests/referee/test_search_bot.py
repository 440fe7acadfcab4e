"""The search sample: its sampled worlds agree with everything the seat saw, and it answers a
legal action at the tricks of every variant, through the lab's interface."""

import random
import sys
from collections import Counter

import pytest
from conftest import ROOT

from lab.match import seat_inputs
from referee.play.chance import chance_action
from referee.play.random_play import random_action
from referee.rules import rules_for, variant_ids
from referee.rules.engine import apply, is_legal, new_game
from referee.rules.state import CHANCE

sys.path.insert(0, str(ROOT / "sample_bots" / "python" / "search"))
import policy as search

VARIANTS = list(variant_ids())


def _play_decisions(variant, seed, every=7):
    """Some states at leads and follows of a random deal."""
    rules = rules_for(variant)
    s = new_game(rules, levels=("2", "2"), dealer=0, max_deals=1)
    rng = random.Random(seed)
    n = 0
    while not s.is_terminal:
        if s.turn == CHANCE:
            s, _ = apply(s, chance_action(s, seed))
            continue
        if s.phase == "play":
            n += 1
            if n % every == 0:
                yield s
        s, _ = apply(s, random_action(s, rng), s.turn)


@pytest.mark.parametrize("variant", VARIANTS)
def test_worlds_agree_with_the_view(variant):
    policy = search.SearchPolicy(worlds=1)
    rules = rules_for(variant)
    built = broken = 0
    for s in _play_decisions(variant, f"worlds:{variant}", every=3):
        view, _ = seat_inputs(s, "x", 2000, 10000)
        seat = view.seat
        for _ in range(3):
            w = policy._world(view, rules)
            if w is None:
                continue
            built += 1
            assert w.turn == seat and w.decision == s.decision
            assert w.hands[seat] == list(s.hands[seat])           # its own hand, as it is
            assert [sum(h) for h in w.hands] == [sum(h) for h in s.hands]
            assert w.trick == s.trick and w.tricks == s.tricks
            # every card is somewhere: the hands, the kitty, the tricks
            cards = Counter(w.kitty)
            for k, h in enumerate(w.hands):
                cards.update({c: n for c, n in enumerate(h) if n})
            for plays, _ in w.tricks:
                for _, c in plays:
                    cards.update(c)
            for _, c in w.trick:
                cards.update(c)
            assert sum(cards.values()) == len(s.deck)
            # a seat shown void of a suit holds none of it (when the deal allowed it)
            # a seat shown void of a suit holds none of it: never in the real deal (the voids
            # are right), and in the sampled world unless no deal of twelve could keep them all
            voids = search._voids(view, w.ctx)
            for other in range(4):
                if other != seat:
                    real = {w.ctx.cls[c] for c, n in enumerate(s.hands[other]) if n}
                    assert not real & voids[other], "a void inferred wrongly"
                    held = {w.ctx.cls[c] for c, n in enumerate(w.hands[other]) if n}
                    broken += bool(held & voids[other])
    assert built >= 5 and broken <= built // 10, (built, broken)


@pytest.mark.parametrize("variant", VARIANTS)
def test_search_answers_legally_in_every_variant(variant):
    policy = search.SearchPolicy(worlds=1)
    policy.match_start(0, "m", variant)
    answered = 0
    for s in _play_decisions(variant, f"act:{variant}", every=23):
        view, legal = seat_inputs(s, "x", 2000, 10000)
        action = policy.act(view, legal)
        assert is_legal(s, action, s.turn)
        answered += 1
        if answered == 2:
            break
    assert answered == 2
