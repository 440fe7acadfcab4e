"""Random legal play for single-deck (for tests, benchmarks and the random bot): the generator
is an input."""

from __future__ import annotations

import random

from ...actions import (Bury, DecisionKind, Declare, HandOver, Pass, Play, Return, RevealDun,
                        Transfer, Uprising)
from ...draws import choice, sample
from ...sampling import draw, expand, sample_throw
from ...state import State
from ...trump import TRUMP
from . import combos
from .declare import may_reveal
from .flow import SingleDeckState, burial_judge, trumps_of
from .legal import actions

THROW_RATE = 0.25


_FOLLOW = DecisionKind.FOLLOW
_LEAD = DecisionKind.LEAD


def random_burials(s: SingleDeckState, rng: random.Random, n: int) -> list[Bury]:
    """``n`` random burials, as ``n`` calls of ``random_action`` draw them (the same burials,
    the same draws from ``rng``), with the hand's work done once."""
    one = _burial_drawer(s)
    return [one(rng) for _ in range(n)]


def _burial_drawer(s: SingleDeckState):
    """A function of a generator drawing one random legal burial of the seat to act: up to 30
    random draws of the kitty's size, else the first legal burial."""
    hand = s.hands[s.turn]
    cards = expand(hand, range(54))
    size = s.rules.kitty_size
    judge = burial_judge(s.rules, hand, s.ctx, s.side_suits_held)

    def one(rng: random.Random) -> Bury:
        for _ in range(30):
            pick = draw(rng, cards, size)
            if judge(pick) is None:
                return Bury(pick)
        for b in _lazy_legal(s):
            return b
        raise ValueError("no legal burial")  # a hand always has one: the points cap alone binds
    return one


def random_action(s: SingleDeckState, rng: random.Random, declare_rate: float = 0.35):
    kind, seat = s.decision, s.turn
    hand = s.hands[seat]
    ctx = s.ctx
    if kind is _FOLLOW:
        lead_kind, c, lead = s.trick_fmt
        if lead_kind == combos.SINGLE:  # legal by construction: the suit if held, else anything
            suit = [k for k in ctx.members[c] if hand[k]]
            return Play((choice(rng, suit or [k for k, x in enumerate(hand) if x]),))
    if kind == DecisionKind.DECLARE:
        options = may_reveal(s, seat)
        if options and rng.random() < declare_rate:
            return Declare((choice(rng, options),))
        return Pass()
    if kind == DecisionKind.UPRISING:
        return Uprising() if rng.random() < 0.3 else Pass()
    if kind == DecisionKind.HANDOVER:
        return HandOver() if rng.random() < 0.5 else Pass()
    if kind == DecisionKind.TRANSFER:
        return Transfer(tuple(trumps_of(s, seat))) if rng.random() < 0.5 else Pass()
    if kind == DecisionKind.RETURN:
        side = [k for k in range(54) if hand[k] and ctx.cls[k] != TRUMP]
        return Return((choice(rng, side or expand(hand, range(54))),))
    if kind == DecisionKind.DUN_REVEAL:
        ranks = [r for r in combos.held_duns(hand) if r != s.level and r not in s.hard_duns]
        if ranks and rng.random() < 0.7:
            r = choice(rng, ranks)
            return RevealDun(tuple(su * 13 + r for su in range(4)))
        return Pass()
    if kind == DecisionKind.BURY:
        return _burial_drawer(s)(rng)
    if kind == DecisionKind.LEAD:
        duns = combos.held_duns(hand)
        if duns and rng.random() < 0.5:
            d = choice(rng, duns)
            return Play(tuple(su * 13 + d for su in range(4)))
        if rng.random() < THROW_RATE:
            throw = sample_throw(s.hands[seat], s.ctx, rng)
            if throw:
                return Play(throw)
        return Play((choice(rng, [k for k, x in enumerate(hand) if x]),))
    if kind == DecisionKind.FOLLOW:
        lead_kind, c, lead = s.trick_fmt
        n = len(lead)
        if lead_kind == combos.SINGLE:  # legal by construction: the suit if held, else anything
            suit = [k for k in ctx.members[c] if hand[k]]
            return Play((choice(rng, suit or [k for k, x in enumerate(hand) if x]),))
        for _ in range(6):
            if lead_kind == combos.DUN:
                duns = combos.held_duns(hand)
                if duns:
                    d = choice(rng, duns)
                    return Play(tuple(su * 13 + d for su in range(4)))
                play = _dun_follow(s, hand, rng)
            else:
                suit = expand(hand, ctx.members[c])
                if len(suit) >= n:
                    play = draw(rng, suit, n)
                else:
                    rest = [k for k in expand(hand, range(54)) if ctx.cls[k] != c]
                    play = tuple(suit) + draw(rng, rest, n - len(suit))
            if combos.follow_error(lead, lead_kind, c, s.trick_req, hand, play, ctx) is None:
                return Play(play)
        return choice(rng, list(_lazy_legal(s)))
    raise ValueError(f"no seat decision now: {kind.value}")


def _dun_follow(s: SingleDeckState, hand, rng: random.Random):
    ctx = s.ctx
    trumps = sorted(expand(hand, ctx.members[TRUMP]), key=ctx.key.__getitem__, reverse=True)
    sides = [expand(hand, ctx.members[c]) for c in range(4) if c != ctx.suit]
    if s.trick_req == "soft":
        play = [choice(rng, x) for x in sides if x]
        if trumps:
            play.append(choice(rng, trumps))
        rest = [k for x in sides for k in x if k not in play]
        while len(play) < 4 and rest:
            k = choice(rng, rest)
            rest.remove(k)
            play.append(k)
        rest = [k for k in trumps if k not in play]
        while len(play) < 4:
            k = choice(rng, rest)
            rest.remove(k)
            play.append(k)
        return tuple(play)
    take = trumps[:4] if s.trick_req == "gold" else sample(rng, trumps, min(4, len(trumps)))
    side = [k for x in sides for k in x]
    return tuple(take) + draw(rng, side, 4 - len(take))


def _lazy_legal(s: SingleDeckState):
    return actions(s, s.decision, s.turn)
