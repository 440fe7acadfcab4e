"""A family's quick listing of leads and follows (``Family.plays``, what the referee's hints
and the lab list) gives exactly the actions of the checked path (``legal_actions``: every
candidate judged by the rules), in the same order, on many random positions of each family."""

from collections import Counter

import pytest

from referee.play.selfplay import play
from referee.rules import rules_for, variant_ids
from referee.rules.actions import DecisionKind, Play
from referee.rules.engine import is_legal
from referee.rules.families import family_of
from referee.rules.legal import legal_actions

PLAY_KINDS = (DecisionKind.LEAD, DecisionKind.FOLLOW)

CASES = [(v, None) for v in variant_ids() if family_of(rules_for(v)).plays is not None]
CASES.append(("three-deck", {"pair_following": "live"}))


def _lead_shape(state) -> str:
    """What was led, by the cards' multiplicities (``3``, ``2``, ``1+1+1``), for coverage."""
    cards = state.trick[0][1]
    return "+".join(str(n) for n in sorted(Counter(cards).values(), reverse=True))


@pytest.mark.parametrize(("variant", "options"), CASES)
def test_quick_listing_is_the_checked_listing(variant, options):
    rules = rules_for(variant, options)
    family = family_of(rules)
    seen: Counter = Counter()

    def compare(before, seat, action, after, events):
        if seat is None or before.decision not in PLAY_KINDS:
            return
        kind = before.decision
        quick = [Play(cards) for cards in family.plays(before, kind, seat)]
        checked = list(legal_actions(before))
        assert quick == checked, (variant, kind, before.trick)
        assert len(set(quick)) == len(quick)
        if len(quick) <= 40:  # the engine's own check agrees on every listed play
            assert all(is_legal(before, a, seat) for a in quick)
        if kind == DecisionKind.FOLLOW:
            hand = before.hands[seat]
            led = before.trick[0][1]
            suit = before.ctx.members[before.ctx.cls[led[0]]]
            held = sum(hand[k] for k in suit)
            seen["follow", _lead_shape(before), "short" if held <= len(led) else "long"] += 1
        else:
            seen["lead"] += 1

    for game in range(40):
        play(rules, f"quick:{variant}:{game}", max_deals=2, on_action=compare)
    follows = {key: n for key, n in seen.items() if key[0] == "follow"}
    assert seen["lead"] > 200
    # follows of the shapes each family leads, by a seat holding more of the suit than the
    # lead and by one holding no more (all of it, and other cards)
    assert sum(n for key, n in follows.items() if key[2] == "short") > 100
    assert sum(n for key, n in follows.items() if key[2] == "long") > 100
    assert len({key[1] for key in follows}) >= 2, follows


def test_single_deck_follows_to_a_dun_are_the_checked_ones():
    """A dun led (four of a rank, 墩) binds its followers by its kind; the quick listing's test
    of each candidate gives the checked listing, for each kind of dun and for a follower that
    holds a dun of its own."""
    from referee.rules.families.single_deck import combos
    rules = rules_for("single-deck")
    family = family_of(rules)
    seen: Counter = Counter()

    def compare(before, seat, action, after, events):
        if seat is None or before.decision != DecisionKind.FOLLOW:
            return
        if before.trick_fmt[0] != combos.DUN:
            return
        quick = [Play(cards) for cards in family.plays(before, DecisionKind.FOLLOW, seat)]
        assert quick == list(legal_actions(before)), before.trick
        own = bool(combos.held_duns(before.hands[seat]))
        seen["holds a dun" if own else before.trick_req] += 1

    for game in range(400):
        play(rules, f"dun:{game}", max_deals=3, on_action=compare)
    assert min(seen[k] for k in (combos.SOFT, combos.HARD, combos.GOLD)) >= 10, seen
    assert seen["holds a dun"] >= 1, seen


def _burial_positions(variant: str, deals: int) -> list:
    states: list = []
    play(rules_for(variant), "burials", max_deals=deals,
         on_action=lambda before, seat, action, after, events:
         before.decision is DecisionKind.BURY and states.append(before))
    return states


@pytest.mark.parametrize("variant", [v for v in variant_ids()
                                     if family_of(rules_for(v)).random_burials is not None])
def test_quick_burial_samples_are_the_random_players_draws(variant):
    """``Family.random_burials`` (the hint's sample of a burial) draws what as many calls of
    ``random_action`` with the same generator draw, each legal."""
    import random

    from referee.play.random_play import random_action

    family = family_of(rules_for(variant))
    states = _burial_positions(variant, 40)
    assert len(states) >= 20
    for i, state in enumerate(states):
        quick = family.random_burials(state, random.Random(f"s{i}"), 8)
        rng = random.Random(f"s{i}")
        assert quick == [random_action(state, rng) for _ in range(8)]
        assert all(is_legal(state, b, state.turn) for b in quick)


def test_combinations_of_distinct_cards_are_the_general_listings():
    """``multiset_combinations`` of a hand holding each card once (one deck) takes plain
    combinations: the same sub-multisets, in the same order, as the general listing gives."""
    import random

    from referee.rules.multisets import _combinations, multiset_combinations

    rng = random.Random(5)
    for _ in range(200):
        kinds = rng.sample(range(54), rng.randint(4, 14))
        counts = {k: 1 for k in kinds}
        n = rng.randint(4, min(7, len(kinds)))
        quick = list(multiset_combinations(counts, n))
        assert quick == list(_combinations(sorted(counts), counts, n))
        assert quick and all(list(c) == sorted(c) for c in quick)
