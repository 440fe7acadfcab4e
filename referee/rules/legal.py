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
        # leads list no throws (any set of one suit may be thrown), except in three-deck,
        # which has no throws
        self.complete = self.kind != DecisionKind.LEAD or state.rules.family == "three_deck"

    def __contains__(self, action: Action) -> bool:
        return is_legal(self.state, action, self.seat)

    def __iter__(self) -> Iterator[Action]:
        s = self.state
        kind = self.kind
        seat = self.seat
        family = s.rules.family
        if family != "two_deck":
            yield from _other_family(s, kind, seat)
            return
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
            yield from (Play(c) for c in iter_follows(s, seat))

    def __bool__(self) -> bool:
        return any(True for _ in self)

    def count(self) -> int:
        if self.kind == DecisionKind.BURY and self.state.rules.family == "two_deck":
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
        return (base + extra for extra in _multiset_combinations(rest, need))
    # held > n: n cards of the suit, with as much of the lead's structure as the suit allows
    # (what combos.follow_error asks; the cases below are its answers, worked out ahead)
    if n == 1:
        return ((k,) for k in sorted(suit))
    pairs = fmt.pairs
    if pairs == 0:  # singles only: any n cards of the suit
        return _multiset_combinations(suit, n)
    if n == 2:  # a pair led: a pair of the suit where one is held, else any two
        owed = [(k, k) for k in sorted(suit) if suit[k] >= 2]
        return iter(owed) if owed else _multiset_combinations(suit, 2)
    lengths = fmt.tractor_lengths
    want = combos.structure_match(suit, ctx, lengths, pairs)
    return (cards for cards in _multiset_combinations(suit, n)
            if combos.structure_match(combos._counts(cards), ctx, lengths, pairs) == want)


def _hand_counts(hand) -> dict[int, int]:
    return {k: n for k, n in enumerate(hand) if n}


def _filtered_follows(s: State, seat: int, size: int, cls: int | None, ok) -> Iterator[tuple]:
    """Distinct plays of ``size`` cards passing ``ok``; when the seat holds no more than ``size``
    cards of class ``cls`` those are all in the play (a necessary condition of every family)."""
    hand = s.hands[seat]
    if cls is not None:
        suit = {k: hand[k] for k in s.ctx.members[cls] if hand[k]}
        held = sum(suit.values())
        if held <= size:
            base = tuple(k for k, c in suit.items() for _ in range(c))
            rest = {k: c for k, c in enumerate(hand) if c and k not in suit}
            for extra in _multiset_combinations(rest, size - held):
                if ok(base + extra):
                    yield base + extra
            return
        for cards in _multiset_combinations(suit, size):
            if ok(cards):
                yield cards
        return
    for cards in _multiset_combinations(_hand_counts(hand), size):
        if ok(cards):
            yield cards


def _other_family(s: State, kind, seat: int) -> Iterator[Action]:
    from . import single_deck as sd
    from . import three_deck as td
    from .actions import BuryJokers, HandOver, Return, RevealDun, Transfer, Uprising
    from .cards import BIG_JOKER, LITTLE_JOKER
    hand = s.hands[seat]
    ctx = s.ctx
    single = s.rules.family == "single_deck"
    if kind == DecisionKind.DECLARE:
        yield Pass()
        if single:
            yield from (Declare((k,)) for k in sd._may_reveal(s, seat))
        else:
            yield from td.declaration_options(s, seat)
    elif kind == DecisionKind.UPRISING:
        yield from (Pass(), Uprising())
    elif kind == DecisionKind.HANDOVER:
        yield from (Pass(), HandOver())
    elif kind == DecisionKind.TRANSFER:
        yield from (Pass(), Transfer(tuple(sd._trumps(s, seat))))
    elif kind == DecisionKind.DUN_REVEAL:
        yield Pass()
        for r in sd.held_duns(hand):
            if r != s.level and r not in s.hard_duns:
                yield RevealDun(tuple(su * 13 + r for su in range(4)))
    elif kind == DecisionKind.RETURN:
        if single:
            side = [k for k in range(54) if hand[k] and ctx.cls[k] != 4]
            yield from (Return((k,)) for k in (side or [k for k in range(54) if hand[k]]))
        else:
            yield from (Return(c) for c in _tribute_returns(hand, s.pending[2], ctx))
    elif kind == DecisionKind.BURY:
        size = s.rules.kitty_size
        for cards in _multiset_combinations(_hand_counts(hand), size):
            if single:
                if sd.bury_error(s.rules, hand, cards, ctx, s.side_suits_held) is None:
                    yield Bury(cards)
            elif td.bury_error(s.rules, hand, cards) is None:
                yield Bury(cards)
    elif kind == DecisionKind.JOKER_BURY:
        yield Pass()
        cands = td.take_candidates(s.kitty, ctx)
        for bj in range(hand[BIG_JOKER] + 1):
            for lj in range(hand[LITTLE_JOKER] + 1 if bj == hand[BIG_JOKER] else 1):
                n = bj + lj
                if not n or n > len(cands):
                    continue
                jokers = (BIG_JOKER,) * bj + (LITTLE_JOKER,) * lj
                if not s.kitty_public:
                    # the kitty is hidden from this seat: the referee picks the cards taken back
                    if td.joker_bury_error(s.kitty, td._dealer_six(s), hand, jokers,
                                           td.default_take(s.kitty, n, ctx), ctx,
                                           s.dry_pot) is None:
                        yield BuryJokers(jokers, ())
                    continue
                for take in _multiset_combinations(_hand_counts_list(cands), n):
                    if td.joker_bury_error(s.kitty, td._dealer_six(s), hand, jokers, take, ctx,
                                           s.dry_pot) is None:
                        yield BuryJokers(jokers, take)
    elif kind == DecisionKind.LEAD:
        for k in range(54):
            if hand[k]:
                if single:
                    yield Play((k,))
                else:
                    for n in range(1, min(3, hand[k]) + 1):
                        yield Play((k,) * n)
        if single:
            for r in sd.held_duns(hand):
                yield Play(tuple(su * 13 + r for su in range(4)))
    elif kind == DecisionKind.FOLLOW:
        if single:
            lead_kind, c, lead = s.trick_fmt
            ok = lambda p: sd.follow_error(lead, lead_kind, c, s.trick_req, hand, p, ctx) is None
            cls = None if lead_kind == sd.DUN else c
            yield from (Play(p) for p in _filtered_follows(s, seat, len(lead), cls, ok))
        else:
            lead = s.trick_fmt
            live = s.rules.pair_following == "live"
            ok = lambda p: td.follow_error(lead, hand, p, ctx, live) is None
            yield from (Play(p) for p in _filtered_follows(s, seat, len(lead), ctx.cls[lead[0]],
                                                           ok))


def _tribute_returns(hand, count: int, ctx) -> Iterator[tuple[int, ...]]:
    """Every legal tribute return, built from the pools in the order they are owed (side
    non-point cards, then other non-point cards, then any): only the last pool drawn from is a
    choice."""
    from .cards import POINTS
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
            for extra in _multiset_combinations(pool, need):
                yield base + extra
            return
        base += tuple(k for k, n in pool.items() for _ in range(n))


def _hand_counts_list(cards) -> dict[int, int]:
    out: dict[int, int] = {}
    for k in cards:
        out[k] = out.get(k, 0) + 1
    return out


def bury_count(s: State, seat: int) -> int:
    counts = {k: n for k, n in enumerate(s.hands[seat]) if n}
    return _count_multiset_combinations(counts, s.rules.kitty_size)


__all__ = ["LegalActions", "legal_actions", "lead_units", "legal_follows", "iter_follows",
           "bury_count"]
