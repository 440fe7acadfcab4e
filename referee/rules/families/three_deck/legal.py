"""The legal actions of three-deck: declarations, tribute returns, burials (big jokers first),
joker burying with its take-backs, leads of one to three identical cards (there are no throws),
and every distinct follow."""

from __future__ import annotations

from typing import Iterator

from ...actions import Action, Bury, BuryJokers, DecisionKind, Pass, Play, Return
from ...cards import BIG_JOKER, LITTLE_JOKER, POINTS
from ...multisets import counts_of, filtered_plays, hand_counts, multiset_combinations
from ...state import State
from . import rules as td


def actions(s: State, kind: DecisionKind, seat: int) -> Iterator[Action]:
    """Every legal action of ``seat`` at this decision (the listing is complete)."""
    hand = s.hands[seat]
    ctx = s.ctx
    if kind == DecisionKind.DECLARE:
        yield Pass()
        yield from td.declaration_options(s, seat)
    elif kind == DecisionKind.RETURN:
        yield from (Return(c) for c in tribute_returns(hand, s.pending[2], ctx))
    elif kind == DecisionKind.BURY:
        for cards in multiset_combinations(hand_counts(hand), s.rules.kitty_size):
            if td.bury_error(s.rules, hand, cards) is None:
                yield Bury(cards)
    elif kind == DecisionKind.JOKER_BURY:
        yield Pass()
        cands = td.take_candidates(s.kitty, ctx)
        six = td.dealer_six(s)
        for bj in range(hand[BIG_JOKER] + 1):
            for lj in range(hand[LITTLE_JOKER] + 1 if bj == hand[BIG_JOKER] else 1):
                n = bj + lj
                if not n or n > len(cands):
                    continue
                jokers = (BIG_JOKER,) * bj + (LITTLE_JOKER,) * lj
                if not s.kitty_public:
                    # the kitty is hidden from this seat: the referee picks the cards taken back
                    if td.joker_bury_error(s.kitty, six, hand, jokers,
                                           td.default_take(s.kitty, n, ctx), ctx,
                                           s.dry_pot) is None:
                        yield BuryJokers(jokers, ())
                    continue
                for take in multiset_combinations(counts_of(cands), n):
                    if td.joker_bury_error(s.kitty, six, hand, jokers, take, ctx,
                                           s.dry_pot) is None:
                        yield BuryJokers(jokers, take)
    elif kind == DecisionKind.LEAD:
        for k in range(54):
            for n in range(1, min(3, hand[k]) + 1):
                yield Play((k,) * n)
    elif kind == DecisionKind.FOLLOW:
        lead = s.trick_fmt
        live = s.rules.pair_following == "live"
        ok = lambda p: td.follow_error(lead, hand, p, ctx, live) is None  # noqa: E731
        yield from (Play(p) for p in filtered_plays(hand, ctx.members[ctx.cls[lead[0]]],
                                                    len(lead), ok))


def count(s: State, kind: DecisionKind, seat: int) -> int | None:
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
