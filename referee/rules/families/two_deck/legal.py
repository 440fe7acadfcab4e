"""The legal actions of the two-deck games: every declaration, burial, single / pair / tractor
lead (throws are not listed: any set of one suit class may be thrown) and every distinct follow."""

from __future__ import annotations

from typing import Iterator

from ...actions import Action, Bury, DecisionKind, Declare, Pass, Play, Redeal
from ...multisets import count_multiset_combinations, counts_of, hand_counts, multiset_combinations
from ...state import State
from . import combos
from .declare import declaration_options
from .flow import situation


def actions(s: State, kind: DecisionKind, seat: int) -> Iterator[Action]:
    """Every legal action of ``seat`` at this decision (leads: no throws)."""
    if kind == DecisionKind.DECLARE:
        yield Pass()
        for cards in declaration_options(situation(s, seat), seat, s.hands[seat]):
            yield Declare(cards)
    elif kind == DecisionKind.REDEAL:
        yield Pass()
        yield Redeal()
    elif kind == DecisionKind.BURY:
        for cards in multiset_combinations(hand_counts(s.hands[seat]), s.rules.kitty_size):
            yield Bury(cards)
    elif kind == DecisionKind.LEAD:
        yield from (Play(c) for c in lead_units(s, seat))
    elif kind == DecisionKind.FOLLOW:
        yield from (Play(c) for c in iter_follows(s, seat))


def plays(s: State, kind: DecisionKind, seat: int) -> Iterator[tuple[int, ...]]:
    """The cards of every listed lead or follow, in the order of ``actions``."""
    return iter(lead_units(s, seat)) if kind == DecisionKind.LEAD else iter_follows(s, seat)


def count(s: State, kind: DecisionKind, seat: int) -> int | None:
    """The number of legal burials without listing them (None: count by listing)."""
    if kind == DecisionKind.BURY:
        return count_multiset_combinations(hand_counts(s.hands[seat]), s.rules.kitty_size)
    return None


def lead_units(s: State, seat: int) -> list[tuple[int, ...]]:
    """Every single, pair and tractor the seat could lead."""
    ctx = s.ctx
    hand = s.hands[seat]
    out: list[tuple[int, ...]] = []
    for c in range(5):
        members = [k for k in ctx.members[c] if hand[k]]
        out.extend((k,) for k in members)
        pairs = [k for k in members if hand[k] >= 2]
        out.extend((k, k) for k in pairs)
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


def legal_follows(s: State, seat: int) -> list[tuple[int, ...]]:
    """Every distinct legal follow."""
    return list(iter_follows(s, seat))


def iter_follows(s: State, seat: int) -> Iterator[tuple[int, ...]]:
    """Every distinct legal follow, in the order of ``legal_follows``, made as they are asked
    for (a seat void in a suit led as a long tractor has a great many)."""
    fmt = s.trick_fmt
    ctx = s.ctx
    hand = s.hands[seat]
    n = fmt.size
    suit = {k: hand[k] for k in ctx.members[fmt.cls] if hand[k]}
    held = sum(suit.values())
    if held <= n:  # all of the suit, filled up with anything
        base = tuple(k for k, c in suit.items() for _ in range(c))
        need = n - held
        if need == 0:
            return iter((base,))
        rest = {k: c for k, c in enumerate(hand) if c and k not in suit}
        if need == 1:
            return (base + (k,) for k in rest)
        return (base + extra for extra in multiset_combinations(rest, need))
    # held > n: n cards of the suit, with as much of the lead's structure as the suit allows
    # (what combos.follow_error asks; the cases below are its answers, worked out ahead)
    if n == 1:
        return ((k,) for k in sorted(suit))
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


