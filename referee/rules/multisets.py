"""Counting and listing the distinct sub-multisets of a hand: the combinatorics behind every
family's legal-action listing (burials, follows, returns)."""

from __future__ import annotations

from itertools import combinations, combinations_with_replacement
from typing import Iterator

SINGLES = tuple((k,) for k in range(54))
"""``(k,)`` for every card kind, made once (a listing of singles builds no tuple)."""


def multiset_combinations(counts: dict[int, int], n: int) -> Iterator[tuple[int, ...]]:
    """Distinct sub-multisets of size ``n``, as sorted tuples in ascending order (for ``n`` up
    to 3, the candidates of ``combinations_with_replacement`` but those repeating a kind more
    often than it is held)."""
    kinds = sorted(counts)
    if n == 1:
        return map(SINGLES.__getitem__, kinds)
    if n == 2:
        return (c for c in combinations_with_replacement(kinds, 2)
                if c[0] != c[1] or counts[c[0]] >= 2)
    if n == 3:
        return (c for c in combinations_with_replacement(kinds, 3)
                if (c[0] != c[1] or counts[c[0]] >= (3 if c[1] == c[2] else 2))
                and (c[1] != c[2] or counts[c[1]] >= 2))
    if all(c == 1 for c in counts.values()):  # one of each (one deck): plain combinations
        return combinations(kinds, n)
    return _combinations(kinds, counts, n)


def _combinations(kinds: list[int], counts: dict[int, int], n: int):
    """``multiset_combinations`` of any size: as many of each kind as it can take first."""
    def rec(i: int, left: int, acc: list[int]):
        if left == 0:
            yield tuple(acc)
            return
        if i == len(kinds):
            return
        k = kinds[i]
        for take in range(min(counts[k], left), -1, -1):
            acc.extend([k] * take)
            yield from rec(i + 1, left - take, acc)
            if take:
                del acc[-take:]

    yield from rec(0, n, [])


def short_suit_follows(hand, suit: dict[int, int], n: int) -> Iterator[tuple[int, ...]]:
    """Every follow of ``n`` cards by a seat holding ``suit`` (kind -> count), no more than
    ``n`` cards of the suit led: all of them, filled up with any other cards of ``hand`` (counts
    by kind) in every distinct way."""
    base = tuple(k for k, c in suit.items() for _ in range(c))
    need = n - len(base)
    if need == 0:
        return iter((base,))
    rest = {k: c for k, c in enumerate(hand) if c and k not in suit}
    return (base + extra for extra in multiset_combinations(rest, need))


def count_multiset_combinations(counts: dict[int, int], n: int) -> int:
    """How many distinct sub-multisets of size ``n`` there are."""
    ways = [1] + [0] * n
    for c in counts.values():
        new = [0] * (n + 1)
        for total in range(n + 1):
            if ways[total]:
                for take in range(0, min(c, n - total) + 1):
                    new[total + take] += ways[total]
        ways = new
    return ways[n]


def hand_counts(hand) -> dict[int, int]:
    """kind -> count of a hand of 54 counts, held kinds only."""
    return {k: n for k, n in enumerate(hand) if n}


def counts_of(cards) -> dict[int, int]:
    """kind -> count of a list of cards."""
    out: dict[int, int] = {}
    for k in cards:
        out[k] = out.get(k, 0) + 1
    return out


def filtered_plays(hand, members, size: int, ok) -> Iterator[tuple]:
    """Distinct plays of ``size`` cards passing ``ok``. With ``members`` (the kinds of the led
    suit class) and no more than ``size`` of them held, those are all in the play (a necessary
    condition of following in every family); ``members`` None: any cards of the hand."""
    if members is not None:
        suit = {k: hand[k] for k in members if hand[k]}
        held = sum(suit.values())
        if held <= size:
            base = tuple(k for k, c in suit.items() for _ in range(c))
            rest = {k: c for k, c in enumerate(hand) if c and k not in suit}
            for extra in multiset_combinations(rest, size - held):
                if ok(base + extra):
                    yield base + extra
            return
        for cards in multiset_combinations(suit, size):
            if ok(cards):
                yield cards
        return
    for cards in multiset_combinations(hand_counts(hand), size):
        if ok(cards):
            yield cards

