"""observe(state, seat) depends on nothing hidden from the seat and shows no card it has not
seen."""

import copy
import random
from collections import Counter

import pytest

from referee.rules import DecisionKind, is_legal, observe, rules_for
from referee.seats.botzone_seat import BotzoneGame
from referee.rules.cards import KINDS
from referee.play.chance import chance_action
from referee.play.random_play import random_action
from referee.rules.engine import new_game
from referee.rules.state import CHANCE, P_BURY, P_DEALING, P_PLAY
from referee.rules.engine import apply
from referee.play.selfplay import play, random_policies

SAMPLES_PER_GAME = 60


def _hidden_permuted(s, seat, rng, *, keep_in_hand=None, keep_dealt=frozenset(),
                     keep_kitty=False):
    """A copy of ``s`` with every card hidden from ``seat`` shuffled among the hidden places:
    the other hands, a kitty the seat did not bury, the undealt cards. What a step about to be
    taken will show stays put: ``keep_in_hand`` (seat, cards) cards another seat is about to
    show, ``keep_dealt`` the undealt deck positions (indexes) it will receive, ``keep_kitty``
    the kitty."""
    n = s.copy()
    places = []  # (kind of place, index, size)
    pool = []
    hands = [list(h) for h in s.hands]
    kept = Counter()
    if keep_in_hand is not None:
        kept = Counter(keep_in_hand[1])
        for k, c in kept.items():
            hands[keep_in_hand[0]][k] -= c
    for other in range(4):
        if other == seat:
            continue
        cards = [k for k in range(KINDS) for _ in range(hands[other][k])]
        places.append(("hand", other, len(cards)))
        pool += cards
    kitty_hidden = s.kitty_owner != seat or s.phase == P_BURY
    kitty = list(s.kitty)
    if kitty_hidden and not s.opened_kitty and not s.kitty_public and not keep_kitty:
        places.append(("kitty", None, len(kitty)))
        pool += kitty
    deck = list(s.deck)
    dealt = s.rules.hand_size * 4
    undealt = [i for i in range(s.next_card, dealt) if i not in keep_dealt]
    if s.phase == P_DEALING:
        places.append(("deck", None, len(undealt)))
        pool += [deck[i] for i in undealt]
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
            for at, k in zip(undealt, part):
                deck[at] = k
    if keep_in_hand is not None:
        for k, c in kept.items():
            hands[keep_in_hand[0]][k] += c
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


# -- what a Botzone seat is sent -----------------------------------------------------------------
_TELLS_THE_KITTY = {"TrumpSet", "KittyOpened", "KittyCardDrawn", "DealEnded"}
"""Events that tell every seat the kitty (or the trump it names): in such a step it stays."""


def _botzone_turn(game, events, viewer, after):
    """``game`` (a copy) fed the step's events the viewer receives, as the referee sends them
    (visible ones, as dicts), and, when the viewer decides now, its requests for it."""
    game = copy.deepcopy(game)
    sent = [e.to_dict() for e in events if e.visible(viewer)]
    for e in events:
        if not e.visible(viewer):
            continue
        if type(e).__name__ == "DealStarted":
            game = BotzoneGame(viewer)
        game.see(e)
    if after.turn != viewer or after.phase == "game_over":
        return sent, None
    return sent, game.turn(after.decision, after.phase)


def _kept_for(viewer, before, seat, action, events):
    """What the step shows ``viewer`` and must stay put (``_hidden_permuted``'s keywords)."""
    dealt = frozenset(i for i in range(before.next_card, before.rules.hand_size * 4)
                      if (before.first_receiver + i) % 4 == viewer)
    kitty = any(type(e).__name__ in _TELLS_THE_KITTY or (
        type(e).__name__ == "KittyTaken" and e.seat == viewer) for e in events)
    shown = getattr(action, "cards", ()) if seat != viewer else ()
    return {"keep_in_hand": (seat, shown), "keep_dealt": dealt, "keep_kitty": kitty}


@pytest.mark.parametrize("variant", ["botzone-tractor", "two-deck-80"])
def test_botzone_requests_ignore_hidden_cards(variant):
    """The observation audit above, for what a Botzone seat is sent: at a step, the cards hidden
    from a seat before it are shuffled (the other hands, the kitty before the banker takes it
    up, the cards not yet dealt), keeping what the step itself shows that seat (the cards
    another seat shows, the cards dealt to it, the kitty when it is told); the same action then
    sends the seat the same events and, at its decision, the very same Botzone requests
    (``BotzoneGame``, the seat's own translation), ids and all."""
    rules = rules_for(variant)
    checked = {"events": 0, "requests": 0}
    for game_no in range(4):
        seed = f"bz-hidden:{variant}:{game_no}"
        rng = random.Random(seed)
        games = [None] * 4

        def hook(before, seat, action, after, events):
            if seat is not None and games[seat] is not None:
                _, live = games[seat].turn(before.decision, before.phase)
                if live is not None:
                    games[seat].answer(games[seat].ids_of(action))
            names = {type(e).__name__ for e in events}
            if seat is not None and "ThrowFailed" not in names and rng.random() < 0.5:
                for viewer in range(4):
                    if games[viewer] is None:
                        continue
                    expected = _botzone_turn(games[viewer], events, viewer, after)
                    permuted = _hidden_permuted(before, viewer, rng,
                                                **_kept_for(viewer, before, seat, action, events))
                    if not is_legal(permuted, action, seat):
                        continue  # (a follow the shuffled hand no longer allows)
                    p_after, p_events = apply(permuted, action, seat)
                    if ((p_after.turn, p_after.decision, p_after.next_card)
                            != (after.turn, after.decision, after.next_card)
                            or "ThrowFailed" in {type(e).__name__ for e in p_events}):
                        continue  # (another seat's chance to call, or a throw judged on hands)
                    assert _botzone_turn(games[viewer], p_events, viewer, p_after) == expected
                    checked["events"] += 1
                    checked["requests"] += expected[1] is not None
            for v in range(4):
                for e in events:
                    if not e.visible(v):
                        continue
                    if type(e).__name__ == "DealStarted":
                        games[v] = BotzoneGame(v)
                    if games[v] is not None:
                        games[v].see(e)

        play(rules, seed, random_policies(seed, 0.3), max_deals=2, on_action=hook)
    assert checked["events"] > 500 and checked["requests"] > 120, checked
