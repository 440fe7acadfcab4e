"""The toy family's rules, written only against the engine's shared state and flow helpers."""

from __future__ import annotations

import random

from referee.rules import state as st
from referee.rules.actions import Bury, DecisionKind, Play, Shuffle
from referee.rules.errors import IllegalActionError
from referee.rules.family import Rule
from referee.rules.settlement import DealOutcome
from referee.rules.events import (Buried, BuriedPublic, KittyTaken,
                                  KittyTakenPublic, Played)
from referee.rules.multisets import hand_counts, multiset_combinations
from referee.rules.sampling import DECLARE_RATE, expand
from referee.rules.trump import TRUMP, trump_context

ACE = 12


def _advance(s, ev: list) -> None:
    """Deal every card (nobody may declare), then the dealer takes up the kitty."""
    st.deal_until_choice(s, ev, lambda state, seat: False)
    if s.dealer is None:
        st.set_dealer(s, s.first_receiver, "first receiver", ev)
    s.trump, s.ctx = None, trump_context(s.level, None)
    hand = st.own_hand(s, s.dealer)
    for k in s.kitty:
        hand[k] += 1
    ev.append(KittyTaken(s.dealer, tuple(s.kitty), s.dealer))
    ev.append(KittyTakenPublic(s.dealer))
    s.kitty, s.kitty_owner = (), s.dealer
    s.phase, s.turn, s.decision = st.P_BURY, s.dealer, DecisionKind.BURY


def _check_shuffle(s, a: Shuffle, seat) -> None:
    st.check_drawn_shuffle(s, a)


def _shuffle(s, a: Shuffle, seat, found):
    return st.do_drawn_shuffle(s, a, _advance)


def _check_bury(s, a: Bury, seat) -> None:
    cards = tuple(a.cards)
    if len(cards) != s.rules.kitty_size:
        raise IllegalActionError(f"bury exactly {s.rules.kitty_size} cards, not {len(cards)}")
    st.require_held(s, seat, cards, "bury")


def _bury(s, a: Bury, seat, found):
    cards = tuple(a.cards)
    n = s.copy()
    st.remove_cards(n, seat, cards)
    n.kitty = cards
    st.start_play(n)
    return n, (Buried(seat, cards, seat), BuriedPublic(seat))


def follow_error(led_class: int, hand: list[int], card: int, ctx) -> str | None:
    """A follow is one card of the led suit class when the seat holds one."""
    if ctx.cls[card] != led_class and any(hand[k] for k in ctx.members[led_class]):
        return f"must follow with {ctx.class_name(led_class)}"
    return None


def card_key(led_class: int, card: int, ctx):
    """A card's strength in a trick, or None when it cannot win."""
    c = ctx.cls[card]
    if c != led_class and c != TRUMP:
        return None
    return (1 if c == TRUMP else 0, ctx.pos[card])


def trick_winner(cards, ctx) -> int:
    """Index of the winning card of a trick (the first of equals)."""
    led = ctx.cls[cards[0]]
    best, key = 0, card_key(led, cards[0], ctx)
    for i, k in enumerate(cards[1:], 1):
        got = card_key(led, k, ctx)
        if got is not None and got > key:
            best, key = i, got
    return best


def _check_play(s, a: Play, seat) -> None:
    cards = tuple(a.cards)
    if len(cards) != 1:
        raise IllegalActionError("play one card")
    st.require_held(s, seat, cards, "play")
    if s.decision == DecisionKind.FOLLOW:
        reason = follow_error(s.trick_fmt, s.hands[seat], cards[0], s.ctx)
        if reason:
            raise IllegalActionError(reason)


def _play(s, a: Play, seat, found):
    cards = tuple(a.cards)
    ctx = s.ctx
    if s.decision == DecisionKind.LEAD:
        n = s.copy()
        st.remove_cards(n, seat, cards)
        n.trick, n.trick_fmt = ((seat, cards),), ctx.cls[cards[0]]
        n.trick_key, n.trick_best, n.leader = card_key(n.trick_fmt, cards[0], ctx), 0, seat
        n.turn, n.decision = (seat + 1) % 4, DecisionKind.FOLLOW
        return n, (Played(seat, cards, True),)
    return st.follow_played(s, seat, cards, card_key(s.trick_fmt, cards[0], ctx), _end_deal)


def _end_deal(n, winner: int, ev: list) -> None:
    dt = n.dealer % 2
    at = 1 - dt
    levels = list(n.levels)
    up = at if n.attacker_points >= 40 else dt
    won = levels[up] == ACE
    levels[up] = min(ACE, levels[up] + 1)
    next_dealer = (n.dealer + 1) % 4 if up == at else (n.dealer + 2) % 4
    out = DealOutcome(n.attacker_points, (levels[0], levels[1]), next_dealer, won,
                      up if won else None)
    ev.append(st.deal_ended(n, out))
    st.next_deal(n, out, ev)


RULES = {Shuffle: Rule(_check_shuffle, _shuffle), Bury: Rule(_check_bury, _bury),
         Play: Rule(_check_play, _play)}


def actions(s, kind: DecisionKind, seat: int):
    hand = s.hands[seat]
    if kind == DecisionKind.BURY:
        yield from (Bury(c) for c in multiset_combinations(hand_counts(hand), s.rules.kitty_size))
    elif kind == DecisionKind.LEAD:
        yield from (Play((k,)) for k in range(54) if hand[k])
    elif kind == DecisionKind.FOLLOW:
        yield from (Play((k,)) for k in range(54)
                    if hand[k] and follow_error(s.trick_fmt, hand, k, s.ctx) is None)


def random_action(s, rng: random.Random, declare_rate: float = DECLARE_RATE):
    if s.decision == DecisionKind.BURY:
        return Bury(tuple(rng.sample(expand(s.hands[s.turn], range(54)), s.rules.kitty_size)))
    return rng.choice(list(actions(s, s.decision, s.turn)))

