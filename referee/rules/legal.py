"""Listing legal actions (a lazy view, like ``board.legal_moves``).

``legal_actions(state)`` supports ``in``, iteration, ``bool()`` and ``count()``. It is complete for
every seat decision except a lead, where it lists singles, pairs and tractors but not throws
(``complete`` is False there: any set of cards of one suit class may be thrown). Burials are
generated lazily: there can be millions.
"""

from __future__ import annotations

from typing import Iterator

from . import combos
from .actions import Action, Bury, Declare, DecisionKind, Pass, Play, Redeal
from .declare import declaration_options
from .state import State, is_legal, situation


def _multiset_combinations(counts: dict[int, int], n: int) -> Iterator[tuple[int, ...]]:
    """Distinct sub-multisets of size ``n``."""
    kinds = sorted(counts)

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


def _count_multiset_combinations(counts: dict[int, int], n: int) -> int:
    ways = [1] + [0] * n
    for c in counts.values():
        new = [0] * (n + 1)
        for total in range(n + 1):
            if ways[total]:
                for take in range(0, min(c, n - total) + 1):
                    new[total + take] += ways[total]
        ways = new
    return ways[n]


class LegalActions:
    """Lazy view of the legal actions at a seat's decision."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.kind = state.decision
        self.seat = state.turn
        self.complete = self.kind != DecisionKind.LEAD

    def __contains__(self, action: Action) -> bool:
        return is_legal(self.state, action, self.seat)

    def __iter__(self) -> Iterator[Action]:
        s = self.state
        kind = self.kind
        seat = self.seat
        if kind == DecisionKind.DECLARE:
            yield Pass()
            for cards in declaration_options(situation(s, seat), seat, s.hands[seat]):
                yield Declare(cards)
        elif kind == DecisionKind.REDEAL:
            yield Pass()
            yield Redeal()
        elif kind == DecisionKind.BURY:
            counts = {k: n for k, n in enumerate(s.hands[seat]) if n}
            for cards in _multiset_combinations(counts, s.rules.kitty_size):
                yield Bury(cards)
        elif kind == DecisionKind.LEAD:
            yield from (Play(c) for c in lead_units(s, seat))
        elif kind == DecisionKind.FOLLOW:
            yield from (Play(c) for c in legal_follows(s, seat))

    def __bool__(self) -> bool:
        return any(True for _ in self)

    def count(self) -> int:
        if self.kind == DecisionKind.BURY:
            counts = {k: n for k, n in enumerate(self.state.hands[self.seat]) if n}
            return _count_multiset_combinations(counts, self.state.rules.kitty_size)
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"<LegalActions {self.kind.value} seat {self.seat} complete={self.complete}>"


def legal_actions(state: State) -> LegalActions:
    """The legal actions of the seat to act (see the module docstring)."""
    if state.turn < 0:
        raise ValueError(f"no seat decision now: the state waits for {state.decision.value}")
    return LegalActions(state)


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
    fmt = s.trick_fmt
    ctx = s.ctx
    hand = s.hands[seat]
    n = fmt.size
    suit = {k: hand[k] for k in ctx.members[fmt.cls] if hand[k]}
    held = sum(suit.values())
    if held <= n:
        base = tuple(k for k, c in suit.items() for _ in range(c))
        rest = {k: c for k, c in enumerate(hand) if c and k not in suit}
        return [base + extra for extra in _multiset_combinations(rest, n - held)]
    out = []
    for cards in _multiset_combinations(suit, n):
        if combos.follow_error(fmt, hand, cards, ctx) is None:
            out.append(cards)
    return out


def bury_count(s: State, seat: int) -> int:
    counts = {k: n for k, n in enumerate(s.hands[seat]) if n}
    return _count_multiset_combinations(counts, s.rules.kitty_size)


__all__ = ["LegalActions", "legal_actions", "lead_units", "legal_follows", "bury_count"]
