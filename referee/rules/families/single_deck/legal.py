"""The legal actions of single-deck: reveals, the pre-kitty offers, burials within 3.6, leads
(singles, throws of one suit, duns) and every distinct follow."""

from __future__ import annotations

from itertools import combinations, compress
from typing import Iterator

from ...actions import (Action, Bury, DecisionKind, Declare, HandOver, Pass, Play, Return,
                        RevealDun, Transfer, Uprising)
from ...multisets import SINGLES, filtered_plays, hand_counts, multiset_combinations
from ...state import State
from ...trump import TRUMP
from . import combos
from .declare import may_reveal
from .flow import SingleDeckState, burial_judge, trumps_of


def actions(s: SingleDeckState, kind: DecisionKind, seat: int) -> Iterator[Action]:
    """Every legal action of ``seat`` at this decision (leads: no throws of several cards)."""
    hand = s.hands[seat]
    ctx = s.ctx
    if kind == DecisionKind.DECLARE:
        yield Pass()
        yield from (Declare((k,)) for k in may_reveal(s, seat))
    elif kind == DecisionKind.UPRISING:
        yield from (Pass(), Uprising())
    elif kind == DecisionKind.HANDOVER:
        yield from (Pass(), HandOver())
    elif kind == DecisionKind.TRANSFER:
        yield from (Pass(), Transfer(tuple(trumps_of(s, seat))))
    elif kind == DecisionKind.DUN_REVEAL:
        yield Pass()
        for r in combos.held_duns(hand):
            if r != s.level and r not in s.hard_duns:
                yield RevealDun(tuple(su * 13 + r for su in range(4)))
    elif kind == DecisionKind.RETURN:
        side = [k for k in range(54) if hand[k] and ctx.cls[k] != TRUMP]
        yield from (Return((k,)) for k in (side or [k for k in range(54) if hand[k]]))
    elif kind == DecisionKind.BURY:
        judge = burial_judge(s.rules, hand, ctx, s.side_suits_held)
        for cards in multiset_combinations(hand_counts(hand), s.rules.kitty_size):
            if judge(cards) is None:
                yield Bury(cards)
    elif kind == DecisionKind.LEAD:
        yield from (Play((k,)) for k in range(54) if hand[k])
        for r in combos.held_duns(hand):
            yield Play(tuple(su * 13 + r for su in range(4)))
    elif kind == DecisionKind.FOLLOW:
        lead_kind, c, lead = s.trick_fmt
        ok = lambda p: combos.follow_error(  # noqa: E731
            lead, lead_kind, c, s.trick_req, hand, p, ctx) is None
        members = None if lead_kind == combos.DUN else ctx.members[c]
        yield from (Play(p) for p in filtered_plays(hand, members, len(lead), ok))


_LEAD = DecisionKind.LEAD


def plays(s: SingleDeckState, kind: DecisionKind, seat: int) -> Iterator[tuple[int, ...]]:
    """The cards of every legal lead (no throws) or follow, in the order of ``actions``, built
    from what the rules require instead of checking each candidate: a follow of a single or a
    throw is any cards of the suit led, or all of them and any others, so every candidate is
    legal; a follow of a dun is each candidate ``actions`` judges, passed by a quick test of the
    requirement the dun kinds make (``dun_follow_test``)."""
    hand = s.hands[seat]
    if kind is _LEAD:
        units: list[tuple[int, ...]] = list(compress(SINGLES, hand))
        for r in combos.held_duns(hand):
            units.append(tuple(su * 13 + r for su in range(4)))
        return iter(units)
    lead_kind, c, lead = s.trick_fmt
    if lead_kind == combos.DUN:  # the candidates ``actions`` judges, by a test made for this hand
        test = combos.dun_follow_test(s.trick_req, hand, s.ctx)
        return filtered_plays(hand, None, len(lead), test)
    return suit_follows(hand, s.ctx, c, len(lead))


def suit_follows(hand, ctx, c: int, n: int) -> Iterator[tuple[int, ...]]:
    """Every follow of ``n`` cards to suit class ``c`` (one deck: a card is held once): ``n``
    cards of the suit where it holds more, else all of the suit and any others, in the order
    ``filtered_plays`` lists them."""
    kinds = ctx.kinds[c]
    suit = list(compress(kinds, map(hand.__getitem__, kinds)))
    if len(suit) > n:
        return map(SINGLES.__getitem__, suit) if n == 1 else combinations(suit, n)
    if not suit:  # void in the suit: any n cards
        held = compress(range(54), hand)
        return map(SINGLES.__getitem__, held) if n == 1 else combinations(held, n)
    members = ctx.members[c]
    base = tuple(compress(members, map(hand.__getitem__, members)))  # strongest first
    need = n - len(base)
    if need == 0:
        return iter((base,))
    rest = [k for k in compress(range(54), hand) if k not in base]
    if need == 1:
        return (base + (k,) for k in rest)
    return (base + extra for extra in combinations(rest, need))


def count(s: SingleDeckState, kind: DecisionKind, seat: int) -> int | None:
    return None
