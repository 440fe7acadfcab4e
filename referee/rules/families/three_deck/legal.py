"""The legal actions of three-deck: declarations, tribute returns, burials (big jokers first),
joker burying with its take-backs, leads of one to three identical cards (there are no throws),
and every distinct follow."""

from __future__ import annotations

from itertools import chain
from operator import getitem
from typing import Iterator

from ...actions import Action, Bury, BuryJokers, DecisionKind, Pass, Play, Return
from ...cards import BIG_JOKER, LITTLE_JOKER, POINTS
from ...multisets import (SINGLES, counts_of, filtered_plays, hand_counts,
                          multiset_combinations, short_suit_follows)
from ...state import State
from . import combos
from .declare import declaration_options
from .flow import (ThreeDeckState, bury_error, dealer_six, default_take, joker_bury_error,
                   take_candidates)


def actions(s: ThreeDeckState, kind: DecisionKind, seat: int) -> Iterator[Action]:
    """Every legal action of ``seat`` at this decision (the listing is complete)."""
    hand = s.hands[seat]
    ctx = s.ctx
    if kind == DecisionKind.DECLARE:
        yield Pass()
        yield from declaration_options(s, seat)
    elif kind == DecisionKind.RETURN:
        yield from (Return(c) for c in tribute_returns(hand, s.pending[2], ctx))
    elif kind == DecisionKind.BURY:
        for cards in multiset_combinations(hand_counts(hand), s.rules.kitty_size):
            if bury_error(s.rules, hand, cards) is None:
                yield Bury(cards)
    elif kind == DecisionKind.JOKER_BURY:
        yield Pass()
        cands = take_candidates(s.kitty, ctx)
        six = dealer_six(s)
        for bj in range(hand[BIG_JOKER] + 1):
            for lj in range(hand[LITTLE_JOKER] + 1 if bj == hand[BIG_JOKER] else 1):
                n = bj + lj
                if not n or n > len(cands):
                    continue
                jokers = (BIG_JOKER,) * bj + (LITTLE_JOKER,) * lj
                if not s.kitty_public:
                    # the kitty is hidden from this seat: the referee picks the cards taken back
                    if joker_bury_error(s.kitty, six, hand, jokers,
                                        default_take(s.kitty, n, ctx), ctx,
                                        s.dry_pot) is None:
                        yield BuryJokers(jokers, ())
                    continue
                for take in multiset_combinations(counts_of(cands), n):
                    if joker_bury_error(s.kitty, six, hand, jokers, take, ctx,
                                        s.dry_pot) is None:
                        yield BuryJokers(jokers, take)
    elif kind == DecisionKind.LEAD:
        for k in range(54):
            for n in range(1, min(3, hand[k]) + 1):
                yield Play((k,) * n)
    elif kind == DecisionKind.FOLLOW:
        lead = s.trick_fmt
        live = s.rules.pair_following == "live"
        ok = lambda p: combos.follow_error(lead, hand, p, ctx, live) is None  # noqa: E731
        yield from (Play(p) for p in filtered_plays(hand, ctx.members[ctx.cls[lead[0]]],
                                                    len(lead), ok))


_LEADS = tuple(tuple(tuple((k,) * n for n in range(1, held + 1)) for held in range(4))
               for k in range(54))
"""``_LEADS[k][held]``: the leads of kind ``k`` held ``held`` times (a single, pair, triple)."""


def plays(s: ThreeDeckState, kind: DecisionKind, seat: int) -> Iterator[tuple[int, ...]]:
    """The cards of every legal lead or follow, in the order of ``actions``, built from what
    ``rules.follow_error`` requires instead of checking each candidate."""
    hand = s.hands[seat]
    if kind == DecisionKind.LEAD:
        return chain.from_iterable(map(getitem, _LEADS, hand))
    lead = s.trick_fmt
    ctx = s.ctx
    return follows(hand, ctx.members[ctx.cls[lead[0]]], len(lead),
                   s.rules.pair_following == "live")


def follows(hand, members, n: int, live: bool) -> Iterator[tuple[int, ...]]:
    """Every follow of ``n`` cards (a single, pair or triple led) to the suit class of
    ``members``. Holding no more of the suit than ``n``: all of it and any others. Else ``n``
    of the suit; unless pairs follow live (活棒), a pair is owed a pair where the seat holds one
    (exactly two of a kind), a triple a triple where it holds three of a kind, else a pair and
    a single where it holds a pair (死棒)."""
    suit = {k: hand[k] for k in members if hand[k]}
    if sum(suit.values()) <= n:
        return short_suit_follows(hand, suit, n)
    if n == 1:
        return map(SINGLES.__getitem__, sorted(suit))
    if not live:
        if n == 2 and 2 in suit.values():
            return iter([(k, k) for k in sorted(suit) if suit[k] >= 2])
        if n == 3:
            if any(c >= 3 for c in suit.values()):
                return iter([(k, k, k) for k in sorted(suit) if suit[k] >= 3])
            if 2 in suit.values():
                return (p for p in multiset_combinations(suit, 3) if p[0] == p[1] or p[1] == p[2])
    return multiset_combinations(suit, n)


def count(s: ThreeDeckState, kind: DecisionKind, seat: int) -> int | None:
    return None


def tribute_returns(hand, count: int, ctx) -> Iterator[tuple[int, ...]]:
    """Every legal tribute return, built from the pools in the order they are owed (side
    non-point cards, then other non-point cards, then any): only the last pool drawn from is a
    choice."""
    pools = [
        {k: n for k, n in enumerate(hand) if n and ctx.cls[k] != 4 and not POINTS[k]},
        {k: n for k, n in enumerate(hand) if n and ctx.cls[k] == 4 and not POINTS[k]},
        {k: n for k, n in enumerate(hand) if n and POINTS[k]},
    ]
    base: tuple[int, ...] = ()
    for pool in pools:
        size = sum(pool.values())
        need = count - len(base)
        if size >= need:
            for extra in multiset_combinations(pool, need):
                yield base + extra
            return
        base += tuple(k for k, n in pool.items() for _ in range(n))
