"""The legal actions of the two-deck games: every declaration, burial, single / pair / tractor
lead (throws are not listed: any set of one suit class may be thrown) and every distinct follow."""

from __future__ import annotations

from itertools import chain
from typing import Iterator

from ...actions import Action, Bury, DecisionKind, Declare, Pass, Play, Redeal
from ...cards import KINDS
from ...multisets import (count_multiset_combinations, counts_of, hand_counts,
                          multiset_combinations, short_suit_follows)
from ...options import BurialCount, Following
from ...state import State
from . import combos
from .declare import declaration_options
from .flow import TwoDeckState, lead_limit, situation


def actions(s: TwoDeckState, kind: DecisionKind, seat: int) -> Iterator[Action]:
    """Every legal action of ``seat`` at this decision (leads: no throws)."""
    if kind == DecisionKind.DECLARE:
        yield Pass()
        for cards in declaration_options(situation(s, seat), seat, s.hands[seat]):
            yield Declare(cards)
    elif kind == DecisionKind.REDEAL:
        yield Pass()
        yield Redeal()
    elif kind == DecisionKind.BURY:
        for size in _burial_sizes(s.rules):
            for cards in multiset_combinations(hand_counts(s.hands[seat]), size):
                yield Bury(cards)
    elif kind == DecisionKind.LEAD:
        yield from (Play(c) for c in leads(s, seat))
    elif kind == DecisionKind.FOLLOW:
        yield from (Play(c) for c in follows(s, seat))


def plays(s: TwoDeckState, kind: DecisionKind, seat: int) -> Iterator[tuple[int, ...]]:
    """The cards of every listed lead or follow, in the order of ``actions``."""
    return iter(leads(s, seat)) if kind == DecisionKind.LEAD else follows(s, seat)


def count(s: TwoDeckState, kind: DecisionKind, seat: int) -> int | None:
    """The number of legal burials without listing them (None: count by listing)."""
    if kind == DecisionKind.BURY:
        hand = hand_counts(s.hands[seat])
        return sum(count_multiset_combinations(hand, size) for size in _burial_sizes(s.rules))
    return None


def _burial_sizes(rules) -> range:
    """How many cards a burial may hold: the kitty's size, or (``burial_count = "at_most"``)
    that many down to none."""
    if rules.burial_count is BurialCount.EXACT:
        return range(rules.kitty_size, rules.kitty_size + 1)
    return range(rules.kitty_size, -1, -1)


_ONE = tuple((k,) for k in range(KINDS))
_TWO = tuple((k, k) for k in range(KINDS))
"""The single and the pair of each card kind, made once (a listing is made at every lead)."""


def lead_units(s: TwoDeckState, seat: int) -> list[tuple[int, ...]]:
    """Every single, pair and tractor the seat holds (what it could lead, but see ``leads``):
    suit class by suit class, its singles, then its pairs, then its tractors."""
    ctx = s.ctx
    hand = s.hands[seat]
    out: list[tuple[int, ...]] = []
    for c in range(5):
        members = [k for k in ctx.members[c] if hand[k]]
        if not members:
            continue
        out += map(_ONE.__getitem__, members)
        pairs = [k for k in members if hand[k] >= 2]
        if not pairs:
            continue
        out += map(_TWO.__getitem__, pairs)
        if len(pairs) < 2:
            continue
        by_pos: dict[int, list[int]] = {}
        for k in pairs:
            by_pos.setdefault(ctx.pos[k], []).append(k)
        # tractors: every run of >= 2 consecutive positions, one pair kind per position
        positions = sorted(by_pos)
        for i, p in enumerate(positions):
            chains = [[k] for k in by_pos[p]]
            q = p
            j = i + 1
            while j < len(positions) and positions[j] == q + 1:
                q += 1
                chains = [ch + [k] for ch in chains for k in by_pos[q]]
                for ch in chains:
                    out.append(tuple(x for k in ch for x in (k, k)))
                j += 1
    return out


def leads(s: TwoDeckState, seat: int) -> list[tuple[int, ...]]:
    """``lead_units`` but those longer than a short burial lets the seat lead (``lead_limit``)."""
    units = lead_units(s, seat)
    most = lead_limit(s, seat)
    return units if most is None else [c for c in units if len(c) <= most]


def follows(s: TwoDeckState, seat: int) -> Iterator[tuple[int, ...]]:
    """Every distinct legal follow under the rules: ``iter_follows``, then (``following =
    "same_shape"``, the follower holding some of the suit led) what Botzone's leniency lets it
    play instead: against a tractor, plays of the suit led with the pairs owed but not the
    tractors; the units of the led shape of other suits."""
    if s.rules.following is Following.STRICT:
        return iter_follows(s, seat)
    fmt = s.trick_fmt
    ctx = s.ctx
    hand = s.hands[seat]
    if not fmt.pairs or not any(hand[k] for k in ctx.members[fmt.cls]):
        return iter_follows(s, seat)  # (void: every play is a strict follow already)
    extra = [c for c in lead_units(s, seat) if len(c) == fmt.size and ctx.cls[c[0]] != fmt.cls
             and combos.same_shape_answer(fmt, hand, c, ctx)]
    # (off a suit it holds: none is a strict one)
    return chain(iter_follows(s, seat), _pairs_not_tractors(fmt, hand, ctx), extra)


def _pairs_not_tractors(fmt: combos.Format, hand: list[int], ctx) -> list[tuple[int, ...]]:
    """A tractor led, ``following = "same_shape"``: the plays of the suit led that the strict
    rule refuses and the leniency takes (the pairs owed, without the tractors owed)."""
    n = fmt.size
    if len(fmt.units) != 1 or fmt.units[0].pairs < 2:
        return []
    suit = {k: hand[k] for k in ctx.members[fmt.cls] if hand[k]}
    if sum(suit.values()) <= n:
        return []  # (all of the suit is owed: the strict follows are all)
    lengths = fmt.tractor_lengths
    want = combos.structure_match(suit, ctx, lengths, fmt.pairs)
    return [cards for cards in multiset_combinations(suit, n)
            if combos.structure_match(counts_of(cards), ctx, lengths, fmt.pairs) != want
            and combos.same_shape_answer(fmt, hand, cards, ctx)]


def legal_follows(s: TwoDeckState, seat: int) -> list[tuple[int, ...]]:
    """Every distinct follow the strict rule allows (``follows``: the rules' own)."""
    return list(iter_follows(s, seat))


def iter_follows(s: TwoDeckState, seat: int) -> Iterator[tuple[int, ...]]:
    """Every distinct follow the strict rule allows, in the order of ``legal_follows``, made as
    they are asked for (a seat void in a suit led as a long tractor has a great many)."""
    fmt = s.trick_fmt
    ctx = s.ctx
    hand = s.hands[seat]
    n = fmt.size
    suit = {k: hand[k] for k in ctx.members[fmt.cls] if hand[k]}
    if sum(suit.values()) <= n:  # all of the suit, filled up with anything
        return short_suit_follows(hand, suit, n)
    # held > n: n cards of the suit, with as much of the lead's structure as the suit allows
    # (what combos.follow_error asks; the cases below are its answers, worked out ahead)
    if n == 1:
        return map(_ONE.__getitem__, sorted(suit))
    pairs = fmt.pairs
    if pairs == 0:  # singles only: any n cards of the suit
        return multiset_combinations(suit, n)
    if n == 2:  # a pair led: a pair of the suit where one is held, else any two
        owed = [(k, k) for k in sorted(suit) if suit[k] >= 2]
        return iter(owed) if owed else multiset_combinations(suit, 2)
    lengths = fmt.tractor_lengths
    want = combos.structure_match(suit, ctx, lengths, pairs)
    return (cards for cards in multiset_combinations(suit, n)
            if combos.structure_match(counts_of(cards), ctx, lengths, pairs) == want)


