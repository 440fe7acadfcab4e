"""Helpers of the random players (the generator is always an input: the engine has none)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from referee.rules.draws import choice, randint, sample

DECLARE_RATE = 0.35
"""The chance that a random player declares when it can."""


def expand(hand: list[int], kinds: Sequence[int]) -> list[int]:
    """The cards of ``kinds`` in a hand of counts, each as often as held."""
    out: list[int] = []
    extra: list[int] = []
    for k in kinds:
        held = hand[k]
        if held:
            out.append(k)
            if held > 1:
                extra.append(k)
    if extra:
        out += extra
        for k in extra:
            if hand[k] > 2:
                out.extend([k] * (hand[k] - 2))
    return out


def draw(rng: random.Random, cards, n: int) -> tuple:
    """``tuple(sample(rng, cards, n))``, quicker for one card: a sample of one is the generator's
    ``choice`` (the same card, the same draw from the generator)."""
    if n == 1 and cards:
        return (choice(rng, cards),)
    return tuple(sample(rng, cards, n))


def sample_throw(hand: list[int], ctx, rng: random.Random):
    """A random throw of 2 to 6 cards of one suit class, favouring strong cards (the throws of
    top cards players try); None when no class holds two cards."""
    classes = [c for c in range(5) if sum(map(hand.__getitem__, ctx.members[c])) >= 2]
    if not classes:
        return None
    c = choice(rng, classes)
    cards = expand(hand, ctx.members[c])
    n = randint(rng, 2, min(len(cards), 6))
    cards = cards[: max(n, min(len(cards), n + 2))]
    return tuple(sample(rng, cards, n))
