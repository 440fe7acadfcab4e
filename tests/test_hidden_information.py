"""observe(state, seat) depends on nothing hidden from the seat and shows no card it has not
seen."""

import random
from collections import Counter

import pytest

from referee.rules import DecisionKind, observe, rules_for
from referee.rules.cards import KINDS
from referee.play.chance import chance_action
from referee.play.random_play import random_action
from referee.rules.engine import new_game
from referee.rules.state import CHANCE, P_BURY, P_DEALING, P_PLAY
from referee.rules.engine import apply
from referee.play.selfplay import play, random_policies

SAMPLES_PER_GAME = 60


def _hidden_permuted(s, seat, rng):
    """A copy of ``s`` with every card hidden from ``seat`` shuffled among the hidden places:
    the other hands, a kitty the seat did not bury, the undealt cards."""
    n = s.copy()
    places = []  # (kind of place, index, size)
    pool = []
    hands = [list(h) for h in s.hands]
    for other in range(4):
        if other == seat:
            continue
        cards = [k for k in range(KINDS) for _ in range(hands[other][k])]
        places.append(("hand", other, len(cards)))
        pool += cards
    kitty_hidden = s.kitty_owner != seat or s.phase == P_BURY
    kitty = list(s.kitty)
    if kitty_hidden and not s.opened_kitty and not s.kitty_public:
        places.append(("kitty", None, len(kitty)))
        pool += kitty
    deck = list(s.deck)
    dealt = s.rules.hand_size * 4
    if s.phase == P_DEALING:
        rest = deck[s.next_card:dealt]
        places.append(("deck", None, len(rest)))
        pool += rest
    rng.shuffle(pool)
    i = 0
    for kind, idx, size in places:
        part, i = pool[i:i + size], i + size
        if kind == "hand":
            hands[idx] = [0] * KINDS
            for k in part:
                hands[idx][k] += 1
        elif kind == "kitty":
            kitty = part
        else:
            deck[s.next_card:dealt] = part
    n.hands = hands
    n.kitty = tuple(kitty)
    n.deck = tuple(deck)
    return n


def _observed_cards(o):
    """The multiset of physical cards the observation shows: per seat, what it shows of that
    seat's cards (the viewer's hand and buried kitty, each seat's plays; a declaration shows
    cards that are still in hand, or played or buried since, so it adds only copies not shown
    otherwise), then the public kitty and the drawn kitty card (kitty cards that may also be
    in a hand or a trick by now)."""
    by_seat = [Counter() for _ in range(4)]
    by_seat[o.seat] += Counter(o.hand) + Counter(o.my_kitty)
    last_won = o.tricks[-1][0] if o.tricks else None
    for s, play_ in (o.trick if tuple(o.trick) != last_won else ()):  # a trick won just now is
        by_seat[s].update(play_)                                        # in both: count it once
    for trick, _ in o.tricks:
        for s, play_ in trick:
            by_seat[s].update(play_)
    for s, shown in o.declarations:
        by_seat[s] |= Counter(shown)
    cards = sum(by_seat, Counter())
    cards |= Counter(o.public_kitty)
    if o.drawn_kitty_card is not None:
        cards |= Counter([o.drawn_kitty_card])
    return cards


# events whose cards an actor shows from its own hand: the actor had been shown them already
# (not PreKittyAction: a three-deck joker burial also names the kitty cards the seat takes)
_FROM_HAND = {"Declared": "seat", "Played": "seat", "Buried": "seat", "ThrowFailed": "seat",
              "CardsPassed": "giver"}


def _seen_from_events(events, seat):
    """The multiset of cards the seat was shown this deal by the events it may see: each copy
    counted once per event that showed it (a card the seat itself shows from its hand is not
    counted again), so that a second copy of a card the seat saw once is a leak (two and three
    decks hold two or three copies of every card)."""
    seen = Counter()
    for e in events:
        if type(e).__name__ == "DealStarted":  # an observation speaks of its own deal
            seen = Counter()
        if not e.visible(seat):
            continue
        actor = _FROM_HAND.get(type(e).__name__)
        if actor is not None and getattr(e, actor) == seat:
            continue
        for name in ("card", "cards", "kitty", "attempted", "forced"):  # every card field
            v = getattr(e, name, None)
            if v is None:
                continue
            seen.update(v if isinstance(v, tuple) else (v,))
    return seen


@pytest.mark.parametrize("variant", ["two-deck-80", "two-deck-fry", "single-deck", "three-deck"])
def test_observation_ignores_hidden_cards(variant):
    rules = rules_for(variant)
    checked = 0
    for game in range(8):
        rng = random.Random(f"hidden:{game}")
        events_so_far = []

        def hook(before, seat, action, after, events):
            nonlocal checked
            events_so_far.extend(events)
            if rng.random() > SAMPLES_PER_GAME / 400:
                return
            for viewer in range(4):
                o = observe(after, viewer)
                for _ in range(2):
                    permuted = _hidden_permuted(after, viewer, rng)
                    assert observe(permuted, viewer) == o
                # never a card the seat has not seen
                seen = _seen_from_events(events_so_far, viewer)
                shown = _observed_cards(o)
                assert shown <= seen, shown - seen  # multisets: a second copy is a leak too
                checked += 1

        policies = random_policies(f"hidden:{game}", 0.05 if game % 2 else None)
        play(rules, f"hidden:{game}", policies, max_deals=3, on_action=hook)
    assert checked > 500


def test_permutation_really_moves_hidden_cards():
    """The test above would be empty if permuting changed nothing: check it does."""
    rules = rules_for("two-deck-fry")
    s = new_game(rules)
    rng = random.Random(1)
    while s.phase != P_PLAY:
        if s.turn == CHANCE:
            s, _ = apply(s, chance_action(s, "perm"))
        else:
            s, _ = apply(s, random_action(s, rng), s.turn)
    moved = _hidden_permuted(s, 0, random.Random(2))
    assert moved.hands[0] == s.hands[0]
    assert moved.hands[1:] != s.hands[1:]
    assert observe(moved, 1) != observe(s, 1)  # seat 1's own hand did change


def test_a_declaration_chance_is_not_shown_to_other_seats():
    """Only the seat offered a declaration (or a redeal) learns that it has one: being offered
    one tells what it holds."""
    rules = rules_for("two-deck-80")
    s = new_game(rules)
    while s.decision != DecisionKind.DECLARE:
        s, _ = apply(s, chance_action(s, "offer")) if s.turn == CHANCE else (s, None)
    seat = s.turn
    assert observe(s, seat).to_act == seat and observe(s, seat).decision == DecisionKind.DECLARE
    for other in range(4):
        if other != seat:
            assert observe(s, other).to_act is None and observe(s, other).decision is None


def test_single_deck_kitty_is_public_and_three_deck_kitty_only_when_the_rules_say():
    """single-deck shows the kitty face up and buries face up (000 3.5, 3.6); three-deck shows
    it after a declaration or a buried joker, and keeps it hidden otherwise (001 section 4)."""
    seen_public = {"single-deck": 0, "three-deck": 0}
    seen_hidden = 0
    for variant in seen_public:
        rules = rules_for(variant)
        for game in range(6):
            def hook(before, seat, action, after, events):
                nonlocal seen_hidden
                if after.phase != "play":
                    return
                for viewer in range(4):
                    o = observe(after, viewer)
                    if after.kitty_public:
                        assert o.public_kitty == tuple(after.kitty)
                        seen_public[variant] += 1
                    else:
                        assert variant == "three-deck" and o.public_kitty == ()
                        assert (o.my_kitty != ()) == (viewer == after.kitty_owner)
                        seen_hidden += 1
            play(rules, f"kitty:{game}", random_policies(f"kitty:{game}", 0.01 if game % 2 else None),
                 max_deals=2, on_action=hook)
    assert seen_public["single-deck"] and seen_public["three-deck"] and seen_hidden
