"""Random legal play, for tests, benchmarks and the ``random`` sample bot. The random generator
is an input; the engine itself has none."""

from __future__ import annotations

import random

from .rules import combos
from .rules.actions import Bury, DecisionKind, Declare, Pass, Play, Redeal
from .rules.declare import declaration_options
from .rules.legal import lead_units, legal_follows
from .rules.state import State, situation
from .rules.trump import TRUMP

DECLARE_RATE = 0.35
THROW_RATE = 0.25
TRACTOR_RATE = 0.15


def _cards(hand: list[int], kinds) -> list[int]:
    """The cards of ``kinds`` in a hand of counts, each as often as held."""
    out = [k for k in kinds if hand[k]]
    extra = [k for k in out if hand[k] > 1]
    if extra:
        out += extra
        for k in extra:
            if hand[k] > 2:
                out.extend([k] * (hand[k] - 2))
    return out


def random_action(s: State, rng: random.Random, declare_rate: float = DECLARE_RATE):
    """A random legal action for the seat to act (every decision kind, throws included);
    ``declare_rate`` is the chance of declaring when a declaration is possible."""
    kind = s.decision
    seat = s.turn
    if kind == DecisionKind.DECLARE:
        options = declaration_options(situation(s, seat), seat, s.hands[seat])
        if options and rng.random() < declare_rate:
            return Declare(rng.choice(options))
        return Pass()
    if kind == DecisionKind.REDEAL:
        return Redeal() if rng.random() < 0.5 else Pass()
    if kind == DecisionKind.BURY:
        cards = _cards(s.hands[seat], range(54))
        return Bury(tuple(rng.sample(cards, s.rules.kitty_size)))
    if kind == DecisionKind.LEAD:
        r = rng.random()
        if r < THROW_RATE:
            throw = _random_throw(s, seat, rng)
            if throw:
                return Play(throw)
        if r < THROW_RATE + TRACTOR_RATE:
            return Play(rng.choice(lead_units(s, seat)))
        hand = s.hands[seat]
        k = rng.choice(_cards(hand, range(54)))
        return Play((k, k) if hand[k] >= 2 and rng.random() < 0.6 else (k,))
    if kind == DecisionKind.FOLLOW:
        return Play(_random_follow(s, seat, rng))
    raise ValueError(f"no seat decision now: {kind.value}")


def _random_throw(s: State, seat: int, rng: random.Random):
    hand = s.hands[seat]
    ctx = s.ctx
    classes = [c for c in range(5) if sum(map(hand.__getitem__, ctx.members[c])) >= 2]
    if not classes:
        return None
    c = rng.choice(classes)
    cards = _cards(hand, ctx.members[c])
    n = rng.randint(2, min(len(cards), 6))
    # favour strong cards: throws of top cards are what players try
    cards = cards[: max(n, min(len(cards), n + 2))]
    return tuple(rng.sample(cards, n))


def _random_follow(s: State, seat: int, rng: random.Random):
    fmt = s.trick_fmt
    ctx = s.ctx
    hand = s.hands[seat]
    n = fmt.size
    suit = _cards(hand, ctx.members[fmt.cls])
    if len(suit) <= n:
        cls = ctx.cls
        rest = _cards(hand, [k for k in range(54) if hand[k] and cls[k] != fmt.cls])
        # void or short: fill with anything; try a matching ruff now and then
        if not suit and fmt.cls != TRUMP and rng.random() < 0.5:
            trumps = _cards(hand, ctx.members[TRUMP])
            if len(trumps) >= n:
                return tuple(rng.sample(trumps, n))
        return tuple(suit) + tuple(rng.sample(rest, n - len(suit)))
    if fmt.pairs == 0:
        return tuple(rng.sample(suit, n))
    if n == 2:  # a pair led: a pair of the suit is owed when held
        pairs = [k for k in ctx.members[fmt.cls] if hand[k] >= 2]
        if pairs:
            k = rng.choice(pairs)
            return (k, k)
        return tuple(rng.sample(suit, 2))
    for _ in range(4):
        play = tuple(rng.sample(suit, n))
        if combos.follow_error(fmt, hand, play, ctx) is None:
            return play
    return rng.choice(legal_follows(s, seat))
