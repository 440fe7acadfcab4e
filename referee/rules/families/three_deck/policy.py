"""Random legal play for three-deck (for tests, benchmarks and the random bot): the generator
is an input."""

from __future__ import annotations

import random

from ...actions import Bury, BuryJokers, DecisionKind, Pass, Play, Return
from ...cards import BIG_JOKER, LITTLE_JOKER, POINTS
from ...draws import choice, randint, sample
from ...sampling import draw, expand
from ...state import State
from ...trump import TRUMP
from . import combos
from .declare import declaration_options
from .flow import ThreeDeckState, take_candidates
from .legal import actions


def _lazy_legal(s: ThreeDeckState):
    return actions(s, s.decision, s.turn)


def random_action(s: ThreeDeckState, rng: random.Random, declare_rate: float = 0.35):
    kind, seat = s.decision, s.turn
    hand = s.hands[seat]
    ctx = s.ctx
    if kind == DecisionKind.DECLARE:
        options = declaration_options(s, seat)
        if options and rng.random() < declare_rate:
            return choice(rng, options)
        return Pass()
    if kind == DecisionKind.RETURN:
        count = s.pending[2]
        cards = expand(hand, range(54))
        side = [k for k in cards if ctx.cls[k] != TRUMP and not POINTS[k]]
        plain = [k for k in cards if ctx.cls[k] == TRUMP and not POINTS[k]]
        points = [k for k in cards if POINTS[k]]
        out: list[int] = []
        for pool in (side, plain, points):
            take = min(len(pool), count - len(out))
            out += sample(rng, pool, take)
        return Return(tuple(out))
    if kind == DecisionKind.BURY:
        cards = expand(hand, range(54))
        while True:
            pick = draw(rng, cards, s.rules.kitty_size)
            lj = pick.count(LITTLE_JOKER)
            if not lj or hand[BIG_JOKER] <= pick.count(BIG_JOKER):
                return Bury(pick)
    if kind == DecisionKind.JOKER_BURY:
        if rng.random() < 0.5:
            return Pass()
        cands = take_candidates(s.kitty, ctx)
        jokers = [BIG_JOKER] * hand[BIG_JOKER] + [LITTLE_JOKER] * hand[LITTLE_JOKER]
        n = randint(rng, 1, min(len(jokers), len(cands)))
        if not s.kitty_public:  # a hidden kitty: the referee picks what is taken back
            return BuryJokers(tuple(jokers[:n]), ())
        return BuryJokers(tuple(jokers[:n]), tuple(cands[:n]))
    if kind == DecisionKind.LEAD:
        k = choice(rng, expand(hand, range(54)))
        n = randint(rng, 1, min(3, hand[k]))
        return Play((k,) * n)
    if kind == DecisionKind.FOLLOW:
        lead = s.trick_fmt
        n = len(lead)
        c = ctx.cls[lead[0]]
        suit = expand(hand, ctx.members[c])
        live = s.rules.pair_following == "live"
        for _ in range(6):
            if len(suit) <= n:
                rest = [k for k in expand(hand, range(54)) if ctx.cls[k] != c]
                if not suit and c != TRUMP and rng.random() < 0.5:
                    groups = [k for k in ctx.members[TRUMP] if hand[k] >= n]
                    if groups:
                        return Play((choice(rng, groups),) * n)
                play = tuple(suit) + draw(rng, rest, n - len(suit))
            else:
                groups = [k for k in ctx.members[c] if hand[k] >= n]
                if n > 1 and groups and (not live or rng.random() < 0.5):
                    play = (choice(rng, groups),) * n
                elif n == 3 and not live:
                    pairs = [k for k in ctx.members[c] if hand[k] == 2]
                    if pairs:
                        p = choice(rng, pairs)
                        other = [k for k in suit if k != p]
                        play = (p, p, choice(rng, other))
                    else:
                        play = draw(rng, suit, n)
                else:
                    play = draw(rng, suit, n)
            if combos.follow_error(lead, hand, play, ctx, live) is None:
                return Play(play)
        return choice(rng, list(_lazy_legal(s)))
    raise ValueError(f"no seat decision now: {kind.value}")
