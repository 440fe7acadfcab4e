"""Random legal play for the two-deck games (for tests, benchmarks and the random bot): the
generator is an input; throws and tractors are tried now and then, follows are legal."""

from __future__ import annotations

import random

from ...actions import Bury, DecisionKind, Declare, Pass, Play, Redeal
from ...options import BurialCount
from ...draws import choice
from ...sampling import DECLARE_RATE, draw, expand, sample_throw
from ...state import State
from ...trump import TRUMP
from . import combos
from .declare import declaration_options
from .flow import TwoDeckState, lead_limit, situation
from .legal import lead_units, leads, legal_follows

THROW_RATE = 0.25
TRACTOR_RATE = 0.15


def random_action(s: TwoDeckState, rng: random.Random, declare_rate: float = DECLARE_RATE):
    """A random legal action for the seat to act (every decision kind, throws included);
    ``declare_rate`` is the chance of declaring when a declaration is possible."""
    kind = s.decision
    seat = s.turn
    if kind == DecisionKind.DECLARE:
        options = declaration_options(situation(s, seat), seat, s.hands[seat])
        if options and rng.random() < declare_rate:
            return Declare(choice(rng, options))
        return Pass()
    if kind == DecisionKind.REDEAL:
        return Redeal() if rng.random() < 0.5 else Pass()
    if kind == DecisionKind.BURY:
        cards = expand(s.hands[seat], range(54))
        return Bury(draw(rng, cards, s.rules.kitty_size))
    if kind == DecisionKind.LEAD:
        if s.rules.burial_count is not BurialCount.EXACT:  # (a short burial: see leads)
            most = lead_limit(s, seat)
            if most is not None and most < sum(s.hands[seat]):
                return Play(choice(rng, leads(s, seat)))
        r = rng.random()
        if r < THROW_RATE:
            throw = sample_throw(s.hands[seat], s.ctx, rng)
            if throw:
                return Play(throw)
        if r < THROW_RATE + TRACTOR_RATE:
            return Play(choice(rng, lead_units(s, seat)))
        hand = s.hands[seat]
        k = choice(rng, expand(hand, range(54)))
        return Play((k, k) if hand[k] >= 2 and rng.random() < 0.6 else (k,))
    if kind == DecisionKind.FOLLOW:
        return Play(_random_follow(s, seat, rng))
    raise ValueError(f"no seat decision now: {kind.value}")


def _random_follow(s: TwoDeckState, seat: int, rng: random.Random):
    fmt = s.trick_fmt
    ctx = s.ctx
    hand = s.hands[seat]
    n = fmt.size
    suit = expand(hand, ctx.members[fmt.cls])
    if len(suit) <= n:
        cls = ctx.cls
        rest = expand(hand, [k for k in range(54) if hand[k] and cls[k] != fmt.cls])
        # void or short: fill with anything; try a matching ruff now and then
        if not suit and fmt.cls != TRUMP and rng.random() < 0.5:
            trumps = expand(hand, ctx.members[TRUMP])
            if len(trumps) >= n:
                return draw(rng, trumps, n)
        return tuple(suit) + draw(rng, rest, n - len(suit))
    if n == 1 or fmt.pairs == 0:
        return draw(rng, suit, n)
    if n == 2:  # a pair led: a pair of the suit is owed when held
        pairs = [k for k in ctx.members[fmt.cls] if hand[k] >= 2]
        if pairs:
            k = choice(rng, pairs)
            return (k, k)
        return draw(rng, suit, 2)
    for _ in range(4):
        play = draw(rng, suit, n)
        if combos.follow_error(fmt, hand, play, ctx) is None:
            return play
    return choice(rng, legal_follows(s, seat))
